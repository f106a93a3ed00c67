// Package rpc maps the Connect API of executor onto its use cases.
package rpc

import (
	"context"
	"log/slog"

	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	executorv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1/executorv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/pbconv"
)

// Handler implements executorv1connect.ExecutorServiceHandler over the use cases and
// executorv1connect.WorkspaceServiceHandler, the read-only view (workspace.go).
type Handler struct {
	svc  *app.Service
	view *app.View
	log  *slog.Logger
}

// NewHandler returns the handler.
func NewHandler(svc *app.Service, view *app.View, log *slog.Logger) *Handler {
	return &Handler{svc: svc, view: view, log: log}
}

var (
	_ executorv1connect.ExecutorServiceHandler  = (*Handler)(nil)
	_ executorv1connect.WorkspaceServiceHandler = (*Handler)(nil)
)

// Execute claims and runs a job; it takes only the job id.
func (h *Handler) Execute(ctx context.Context, req *executorv1.ExecuteRequest) (*executorv1.ExecuteResponse, error) {
	out, err := h.svc.Execute(ctx, req.GetJobId(), req.GetLocale(), req.GetDryRun())
	if err != nil {
		return nil, h.toConnectIn(ctx, err, req.GetLocale())
	}
	return &executorv1.ExecuteResponse{Result: pbconv.Result(out.Result), ResultText: out.Text, Images: imagesToProto(out.Result)}, nil
}

func imagesToProto(r *domain.Result) []*commonv1.Image {
	if r == nil {
		return nil
	}
	var out []*commonv1.Image
	for _, im := range r.Images {
		out = append(out, &commonv1.Image{ContentType: im.MIMEType, Data: im.Data, Artifact: im.Artifact, Caption: im.Caption})
	}
	return out
}

// DryRun reports what a patch would do.
func (h *Handler) DryRun(ctx context.Context, req *executorv1.DryRunRequest) (*executorv1.DryRunResponse, error) {
	out, err := h.svc.DryRun(ctx, req.GetPatch(), req.GetLocale())
	if err != nil {
		return nil, h.toConnectIn(ctx, err, req.GetLocale())
	}
	return &executorv1.DryRunResponse{Result: pbconv.Result(out.Result), ResultText: out.Text}, nil
}

// toConnect maps the executor's errors by their fault kind (pkg/rpcserver.ToConnect).
func (h *Handler) toConnect(ctx context.Context, err error) error {
	return rpcserver.ToConnect(ctx, h.log, "executor", err)
}

// toConnectIn is toConnect for a request with the user's locale: a refusal carries its text for
// the user in it (domain.Texts, or approval's words passed on).
func (h *Handler) toConnectIn(ctx context.Context, err error, locale string) error {
	return rpcserver.ToConnectIn(ctx, h.log, "executor", err, locale)
}
