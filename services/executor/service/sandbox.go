package service

import (
	"context"
	"io"
	"log/slog"

	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/sandbox"
)

// sandboxState is what the start-up probe found; it is logged and shown in the heartbeat.
type sandboxState struct {
	label  string
	report sandbox.Report
	none   bool
}

// Text is the line /status shows for the executor, in locale (the probe's detail is logged).
func (s sandboxState) Text(locale string) string {
	switch {
	case s.none:
		return domain.Texts.Text(locale, domain.CodeSandboxNoteNone)
	case s.report.Err != nil:
		return domain.Texts.Text(locale, domain.CodeSandboxNoteUnavailable)
	}
	return domain.Texts.Text(locale, domain.CodeSandboxNoteOn, s.label, s.report.Network)
}

// checkSandbox probes the sandbox at start. A sandbox that does not work does not stop the
// executor (file operations still run), but every shell and git command fails closed.
func checkSandbox(ctx context.Context, cfg sandbox.Config, workspace string, log *slog.Logger) sandboxState {
	st := sandboxState{label: cfg.Label(), none: cfg.Mode == sandbox.ModeNone}
	st.report = sandbox.Probe(ctx, cfg, workspace)
	attrs := []any{slog.String("sandbox", st.label), slog.String("network", cfg.Network),
		slog.String("facilities", st.report.Summary())}
	for _, f := range st.report.Facilities {
		attrs = append(attrs, slog.String("facility_"+f.Name, f.Detail))
	}
	switch {
	case st.none:
		log.WarnContext(ctx, "executor.sandbox_disabled", append(attrs,
			slog.String("note", "executor.sandbox.mode is none: shell commands and git run unconfined as the executor's user"))...)
	case st.report.Err != nil:
		log.ErrorContext(ctx, "executor.sandbox_unavailable", append(attrs, slog.String("error", st.report.Err.Error()),
			slog.String("note", "shell and git commands will be refused; run `picoclaw doctor`, or set executor.sandbox.mode: none to run them unconfined"))...)
	default:
		log.InfoContext(ctx, "executor.sandbox_ready", attrs...)
	}
	return st
}

// reportSandbox puts the sandbox line into the executor's heartbeat, so /status shows it.
func reportSandbox(srv *rpcserver.Server, st sandboxState) {
	if hb := srv.Heartbeat(); hb != nil && hb.Service() != nil {
		hb.Service().SetNote(st.Text("ja"), st.Text("en"))
	}
}

// SandboxDoctor checks whether the executor's sandbox works on this machine with cfg's
// executor.sandbox section, writes what it needs and found to w, and returns an error when
// shell and git commands would be refused.
func SandboxDoctor(ctx context.Context, cfg Config, w io.Writer) error {
	return doctor(ctx, cfg.Executor.Sandbox, w)
}
