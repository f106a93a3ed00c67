// Package approvalclient is the executor's adapter to the approval service's Connect API.
package approvalclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"connectrpc.com/connect"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/enum"
	"github.com/picoclaw-suite/picoclaw/pkg/fault"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/pbconv"
)

// Client implements app.Approval over Connect.
type Client struct {
	c approvalv1connect.ApprovalServiceClient
}

// New wraps a generated client.
func New(c approvalv1connect.ApprovalServiceClient) *Client { return &Client{c: c} }

var _ app.Approval = (*Client)(nil)

// Claim calls ClaimJob.
func (c *Client) Claim(ctx context.Context, jobID, executorID, locale string) (app.Claim, error) {
	res, err := c.c.ClaimJob(ctx, &approvalv1.ClaimJobRequest{JobId: jobID, ExecutorId: executorID, Locale: locale})
	if err != nil {
		return app.Claim{}, mapErr(err)
	}
	claim := app.Claim{
		JobID: jobID, Patch: res.GetPatch(), ContentHash: res.GetContentHash(), AutoApproved: res.GetAutoApproved(),
		Token: res.GetLeaseToken(), LeaseExpiresAt: res.GetLeaseExpiresAt().AsTime(),
	}
	if j := res.GetJob(); j != nil {
		claim.Status = Status(j.GetStatus())
		claim.JobHash = j.GetContentHash()
		claim.UsesBrowser = j.GetUsesBrowser()
		if claim.ContentHash == "" {
			claim.ContentHash = j.GetContentHash()
		}
	}
	return claim, nil
}

// Get calls GetJob.
func (c *Client) Get(ctx context.Context, jobID string) (app.Claim, error) {
	res, err := c.c.GetJob(ctx, &approvalv1.GetJobRequest{JobId: jobID})
	if err != nil {
		return app.Claim{}, mapErr(err)
	}
	j := res.GetJob()
	return app.Claim{
		JobID: jobID, Status: Status(j.GetStatus()), Patch: j.GetPatch(), ContentHash: j.GetContentHash(),
		JobHash: j.GetContentHash(), UsesBrowser: j.GetUsesBrowser(),
		AutoApproved: j.GetStatus() == approvalv1.JobStatus_JOB_STATUS_AUTO_APPROVED,
	}, nil
}

// Report calls ReportExecution.
func (c *Client) Report(ctx context.Context, r app.Report) error {
	req := &approvalv1.ReportExecutionRequest{
		JobId: r.JobID, Event: events.Wire(r.Event), Detail: r.Detail, ExecutorId: r.ExecutorID, LeaseToken: r.Token,
	}
	if r.Result != nil {
		req.Result = pbconv.Result(r.Result)
	}
	if _, err := c.c.ReportExecution(ctx, req); err != nil {
		return mapErr(err)
	}
	return nil
}

// Renew calls RenewClaim.
func (c *Client) Renew(ctx context.Context, jobID, executorID string, token int64) (time.Time, error) {
	res, err := c.c.RenewClaim(ctx, &approvalv1.RenewClaimRequest{JobId: jobID, ExecutorId: executorID, LeaseToken: token})
	if err != nil {
		return time.Time{}, mapErr(err)
	}
	return res.GetLeaseExpiresAt().AsTime(), nil
}

// Lapsed calls ListLapsedClaims.
func (c *Client) Lapsed(ctx context.Context) ([]string, error) {
	res, err := c.c.ListLapsedClaims(ctx, &approvalv1.ListLapsedClaimsRequest{})
	if err != nil {
		return nil, mapErr(err)
	}
	return res.GetJobIds(), nil
}

var events = enum.New(map[app.Event]approvalv1.ExecutionEvent{
	app.EventStarted:      approvalv1.ExecutionEvent_EXECUTION_EVENT_STARTED,
	app.EventCompleted:    approvalv1.ExecutionEvent_EXECUTION_EVENT_COMPLETED,
	app.EventFailed:       approvalv1.ExecutionEvent_EXECUTION_EVENT_FAILED,
	app.EventHashMismatch: approvalv1.ExecutionEvent_EXECUTION_EVENT_HASH_MISMATCH,
	app.EventRefused:      approvalv1.ExecutionEvent_EXECUTION_EVENT_REFUSED,
})

// Status is the lower-case state name of a job status ("granted", "auto_approved", ...).
func Status(s approvalv1.JobStatus) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "JOB_STATUS_"))
}

// mapErr turns approval's refusals into the executor's errors by their fault kind (and the
// EXPIRED reason); approval's text for the user (fault.Text) is passed on as it is.
func mapErr(err error) error {
	e := rpcserver.FromConnect(err)
	out := kindErr(e, err)
	if text, ok := fault.Text(e, ""); ok {
		return fault.WithText(out, "", text)
	}
	return out
}

func kindErr(e, err error) error {
	msg := err.Error()
	var ce *connect.Error
	if errors.As(err, &ce) {
		msg = ce.Message()
	}
	switch fault.KindOf(e) {
	case fault.NotFound:
		return fmt.Errorf("%w: %s", domain.ErrNotFound, msg)
	case fault.Precondition, fault.Conflict:
		if fault.ReasonOf(e) == "EXPIRED" {
			return fmt.Errorf("%w: %s", domain.ErrExpired, msg)
		}
		return fmt.Errorf("%w: %s", domain.ErrConflict, msg)
	case fault.Permission, fault.Unauthenticated:
		return fmt.Errorf("%w: %s", domain.ErrPermission, msg)
	case fault.Invalid:
		return fmt.Errorf("%w: %s", domain.ErrInvalid, msg)
	case fault.Unavailable, fault.Deadline, fault.Canceled:
		return fmt.Errorf("%w: approval service: %s", domain.ErrUnavailable, msg)
	default:
		return fmt.Errorf("approval: %w", err)
	}
}
