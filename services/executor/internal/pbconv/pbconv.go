// Package pbconv converts executor results to the shared protobuf messages.
package pbconv

import (
	"google.golang.org/protobuf/types/known/timestamppb"

	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/domain"
)

// Result converts a result to the shared message.
func Result(r *domain.Result) *commonv1.ExecutionResult {
	out := &commonv1.ExecutionResult{
		Success: r.Success, Executed: int32(r.Executed), Succeeded: int32(r.Succeeded), Failed: int32(r.Failed),
		Summary: r.Summary(domain.LocaleJA), CommitHash: r.CommitHash, DryRun: r.DryRun,
		RolledBack: r.RolledBack, RestoredPaths: r.RestoredPaths,
	}
	if !r.StartedAt.IsZero() {
		out.StartedAt = timestamppb.New(r.StartedAt)
	}
	if !r.FinishedAt.IsZero() {
		out.FinishedAt = timestamppb.New(r.FinishedAt)
	}
	for _, c := range r.Commands {
		out.Commands = append(out.Commands, &commonv1.CommandResult{
			Index: int32(c.Index), Type: c.Type, Action: c.Action, Target: c.Target,
			Success: c.Success, Skipped: c.Skipped, Output: c.Output, Error: c.Error,
			DurationMs: c.Duration.Milliseconds(), OutputTruncated: c.OutputTruncated,
			Sandbox: c.Sandbox, ExitReason: c.ExitReason, ExitCode: int32(c.ExitCode), Signal: c.Signal,
			ErrorCode: c.ErrorCode, ErrorArgs: c.ErrorArgs,
		})
	}
	return out
}
