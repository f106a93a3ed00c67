// Package coder reaches coder-order over its Connect API.
package coder

import (
	"context"
	"errors"

	"connectrpc.com/connect"

	coderv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/coder/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/coder/v1/coderv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/protoconv"
)

// Client implements app.Coder.
type Client struct {
	rpc coderv1connect.CoderServiceClient
}

// New wraps a generated client.
func New(rpc coderv1connect.CoderServiceClient) *Client { return &Client{rpc: rpc} }

var _ app.Coder = (*Client)(nil)

// Propose asks one order.
func (c *Client) Propose(ctx context.Context, in app.ProposeInput) (domain.Proposal, error) {
	res, err := c.rpc.Propose(ctx, &coderv1.ProposeRequest{
		JobId: in.JobID, Order: in.Order, Task: in.Task, Route: protoconv.Route(in.Route),
		Context: in.Context, LocalOnly: in.LocalOnly, Locale: in.Locale,
		ConfirmedCostUsd: in.ConfirmedCostUSD, ConfirmedTokens: in.ConfirmedTokens,
	})
	if err != nil {
		return domain.Proposal{}, coderError(err)
	}
	if res.GetProposal() == nil {
		return domain.Proposal{}, &app.CoderError{Code: "invalid_proposal", Message: "coder-order answered without a proposal"}
	}
	return protoconv.ProposalFromProto(res.GetProposal()), nil
}

// ProposeMany asks several orders in parallel (coder-order runs them).
func (c *Client) ProposeMany(ctx context.Context, in app.ProposeManyInput) ([]domain.ProposalResult, error) {
	res, err := c.rpc.ProposeMany(ctx, &coderv1.ProposeManyRequest{
		JobId: in.JobID, Orders: in.Orders, Task: in.Task, Context: in.Context, LocalOnly: in.LocalOnly, Locale: in.Locale,
	})
	if err != nil {
		return nil, coderError(err)
	}
	out := make([]domain.ProposalResult, 0, len(res.GetResults()))
	for _, r := range res.GetResults() {
		out = append(out, protoconv.ProposalResultFromProto(r))
	}
	return out, nil
}

// coderError turns a Connect error into a stable code the user can be told about.
func coderError(err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return &app.CoderError{Code: "unavailable", Message: err.Error()}
	}
	code := ce.Code().String()
	switch ce.Code() {
	case connect.CodeDeadlineExceeded:
		code = "timeout"
	case connect.CodeResourceExhausted:
		code = "rate_limited"
	}
	out := &app.CoderError{Code: code, Message: ce.Message()}
	// coder-order's detail carries its own stable code (cost_over_limit is ResourceExhausted
	// too) and, for cost_over_limit, the estimate.
	for _, d := range ce.Details() {
		v, derr := d.Value()
		if pr, ok := v.(*commonv1.ProposalResult); derr == nil && ok {
			if pr.GetErrorCode() != "" {
				out.Code = pr.GetErrorCode()
			}
			if e := pr.GetEstimate(); e != nil {
				out.Estimate = &domain.CostHint{EstimatedTokens: e.GetEstimatedTokens(), EstimatedCostUSD: e.GetEstimatedCostUsd(), NearLimit: e.GetNearLimit()}
			}
		}
	}
	return out
}
