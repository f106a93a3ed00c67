// Package app holds the executor's use cases: running an operation list in author order with
// its modes, and Execute/DryRun around the approval service.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/browser"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/proc"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/sandbox"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/workspace"
)

// Modes are the per-job switches of SPEC §8.
type Modes struct {
	StopOnError       bool
	DryRun            bool
	AutoCommit        bool
	CommitPrefix      string
	RollbackOnFailure bool
}

// RunnerConfig configures a Runner.
type RunnerConfig struct {
	Workspace *workspace.Workspace
	Env       []string
	// Sandbox is how shell commands and git run (sandbox.ModeNone runs them directly).
	Sandbox        sandbox.Config
	CommandTimeout time.Duration
	GitTimeout     time.Duration
	OutputLimit    int
	GitAuthorName  string
	GitAuthorEmail string
	BridgeURL      string
	BridgeTimeout  time.Duration
	BridgeHTTP     *http.Client
	// BrowserTools maps browser actions to the bridge's tools (nil: the default table).
	BrowserTools browser.Tools
	// ArtifactsDir keeps what jobs produce besides workspace changes (screenshots), one
	// directory per job.
	ArtifactsDir string
	Version      string
	Logger       *slog.Logger
	Now          func() time.Time
}

// Runner executes operation lists in the workspace.
type Runner struct {
	cfg RunnerConfig
}

// NewRunner returns a Runner.
func NewRunner(cfg RunnerConfig) *Runner {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Runner{cfg: cfg}
}

// job is the state of one run.
type job struct {
	r       *Runner
	id      string
	store   workspace.Store
	browser *browser.Client
	dry     bool
}

// Run executes ops in author order and returns the result; failures of single operations are
// part of the result, never an error.
func (r *Runner) Run(ctx context.Context, jobID string, ops []patch.Operation, m Modes) *domain.Result {
	snap, refused := r.prepare(ctx, jobID, ops, m)
	if refused != nil {
		return refused
	}
	return r.run(ctx, jobID, ops, m, snap)
}

// prepare snapshots what ops will change when a failure is to be rolled back; without a
// snapshot a failure could not be undone, so the job is refused (the result says why).
func (r *Runner) prepare(ctx context.Context, jobID string, ops []patch.Operation, m Modes) (*workspace.Snapshot, *domain.Result) {
	if m.DryRun || !m.RollbackOnFailure {
		return nil, nil
	}
	var touched []string
	for _, op := range ops {
		touched = append(touched, workspace.Touched(op)...)
	}
	slices.Sort(touched)
	snap, err := r.cfg.Workspace.Snapshot(slices.Compact(touched))
	if err == nil {
		return snap, nil
	}
	res := &domain.Result{JobID: jobID, StartedAt: r.cfg.Now()}
	for _, op := range ops {
		res.Commands = append(res.Commands, skipped(op))
	}
	serr := domain.FailWith(nil, err, domain.CodeSnapshotFailed)
	res.RollbackError, res.RollbackFailure = serr.Error(), domain.FailureOf(serr)
	res.FinishedAt = r.cfg.Now()
	res.Tally()
	res.Success = false
	r.cfg.Logger.ErrorContext(ctx, "executor.snapshot_failed", slog.String("error", err.Error()))
	return nil, res
}

// run executes ops; snap (nil: none) is restored when one fails.
func (r *Runner) run(ctx context.Context, jobID string, ops []patch.Operation, m Modes, snap *workspace.Snapshot) *domain.Result {
	log := r.cfg.Logger
	res := &domain.Result{JobID: jobID, DryRun: m.DryRun, StartedAt: r.cfg.Now()}
	log.InfoContext(ctx, "worker.patch_execution_start", slog.String("job_id", jobID),
		slog.Int("operations", len(ops)), slog.Bool("dry_run", m.DryRun))

	j := &job{r: r, id: jobID, dry: m.DryRun, browser: browser.New(browser.Config{
		URL: r.cfg.BridgeURL, HTTP: r.cfg.BridgeHTTP, Timeout: r.cfg.BridgeTimeout, Version: r.cfg.Version, Tools: r.cfg.BrowserTools})}
	defer func() { _ = j.browser.Close() }()
	if m.DryRun {
		j.store = workspace.NewOverlay(r.cfg.Workspace.Disk())
	} else {
		j.store = r.cfg.Workspace.Disk()
	}

	stop := false
	for i, op := range ops {
		if stop || ctx.Err() != nil {
			res.Commands = append(res.Commands, skipped(op))
			continue
		}
		start := r.cfg.Now()
		out, err := j.exec(ctx, op)
		cr := domain.CommandResult{
			Index: op.Index, Type: string(op.Type), Action: op.Action, Target: op.Target,
			Success: err == nil, Output: out.text, OutputTruncated: out.truncated, Duration: r.cfg.Now().Sub(start),
			Sandbox: out.proc.Sandbox, ExitReason: out.proc.ExitReason, ExitCode: out.proc.ExitCode, Signal: out.proc.Signal,
		}
		attrs := []any{slog.Int("command_index", i), slog.String("type", string(op.Type)),
			slog.String("action", op.Action), slog.String("target", op.Target),
			slog.Int64("duration_ms", cr.Duration.Milliseconds())}
		if cr.Sandbox != "" {
			attrs = append(attrs, slog.String("sandbox", cr.Sandbox), slog.String("exit_reason", cr.ExitReason),
				slog.Int("exit_code", cr.ExitCode))
			if cr.Signal != "" {
				attrs = append(attrs, slog.String("signal", cr.Signal))
			}
		}
		if err != nil {
			cr.Fail(err)
			log.ErrorContext(ctx, "worker.command_failed", append(attrs, slog.String("error", cr.Error))...)
			stop = m.StopOnError
		} else {
			log.InfoContext(ctx, "worker.command_executed", attrs...)
		}
		res.Commands = append(res.Commands, cr)
		if out.image != nil && err == nil && !res.AddImage(*out.image) {
			log.InfoContext(ctx, "executor.screenshot_not_attached", slog.String("artifact", out.image.Artifact),
				slog.Int("bytes", len(out.image.Data)), slog.String("type", out.image.MIMEType))
		}
	}
	res.Tally()

	if !res.Success && snap != nil {
		restored, err := snap.Restore()
		res.RolledBack = true
		res.RestoredPaths = restored
		if err != nil {
			rerr := domain.FailWith(nil, err, domain.CodeRollbackIncomplete)
			res.RollbackError, res.RollbackFailure = rerr.Error(), domain.FailureOf(rerr)
		}
		log.WarnContext(ctx, "executor.rollback", slog.Any("restored_paths", restored),
			slog.Bool("complete", err == nil))
	}
	if m.AutoCommit && !m.DryRun && !res.RolledBack && res.Succeeded > 0 {
		hash, err := r.autoCommit(ctx, jobID, m.CommitPrefix, res)
		switch {
		case err != nil:
			res.CommitError, res.CommitFailure = err.Error(), domain.FailureOf(err)
			log.WarnContext(ctx, "worker.auto_commit_failed", slog.String("error", err.Error()))
		case hash != "":
			res.CommitHash = hash
			log.InfoContext(ctx, "worker.auto_commit_success", slog.String("commit", hash))
		default:
			log.InfoContext(ctx, "worker.auto_commit_success", slog.String("commit", ""), slog.String("note", "nothing to commit"))
		}
	}
	res.FinishedAt = r.cfg.Now()
	log.InfoContext(ctx, "worker.patch_execution_complete", slog.Bool("success", res.Success),
		slog.Int("executed_cmds", res.Executed), slog.Int("failed_cmds", res.Failed),
		slog.String("summary", res.Summary(domain.LocaleJA)), slog.Bool("rolled_back", res.RolledBack))
	return res
}

func skipped(op patch.Operation) domain.CommandResult {
	return domain.CommandResult{Index: op.Index, Type: string(op.Type), Action: op.Action, Target: op.Target, Skipped: true}
}

// opOutput is what one operation produced; proc is set for shell and git.
type opOutput struct {
	text      string
	truncated bool
	proc      proc.Output
	// image is a screenshot the operation took, kept as an artifact.
	image *domain.Image
}

func fromProc(o proc.Output) opOutput { return opOutput{text: o.Text, truncated: o.Truncated, proc: o} }

// exec runs (or, in a dry run, checks and describes) one operation.
func (j *job) exec(ctx context.Context, op patch.Operation) (opOutput, error) {
	switch op.Type {
	case patch.TypeFileEdit:
		out, err := workspace.Apply(j.store, op)
		if j.dry && err == nil {
			out = "would have " + out
		}
		return opOutput{text: out}, err
	case patch.TypeShell:
		if strings.TrimSpace(op.Target) == "" && strings.TrimSpace(op.Content) == "" {
			return opOutput{}, domain.Fail(domain.ErrInvalid, domain.CodeShellEmpty)
		}
		line := shellLine(op)
		if strings.IndexByte(line, 0) >= 0 {
			return opOutput{}, domain.Fail(domain.ErrInvalid, domain.CodeShellNUL)
		}
		if j.dry {
			return opOutput{text: "would run: bash -c " + line}, nil
		}
		out, err := proc.Run(ctx, proc.Spec{
			Argv: []string{"bash", "-c", line}, Dir: j.r.cfg.Workspace.Dir(), Env: j.r.cfg.Env,
			Timeout: j.r.cfg.CommandTimeout, Limit: j.r.cfg.OutputLimit,
			Sandbox: &j.r.cfg.Sandbox, Workspace: j.r.cfg.Workspace.Dir(),
		})
		return fromProc(out), err
	case patch.TypeGit:
		args, err := domain.GitArgs(op)
		if err != nil {
			return opOutput{}, err
		}
		if j.dry {
			return opOutput{text: "would run: git " + strings.Join(args, " ")}, nil
		}
		out, err := j.r.git(ctx, args...)
		return fromProc(out), err
	case patch.TypeBrowser:
		tool, _, err := j.browser.Plan(op)
		if err != nil {
			return opOutput{}, err
		}
		if j.dry {
			if !j.browser.Configured() {
				return opOutput{}, domain.Fail(domain.ErrUnavailable, domain.CodeBridgeNotConfigured)
			}
			return opOutput{text: "would call " + tool + " on the MCP Chrome bridge"}, nil
		}
		out, err := j.browser.Call(ctx, op)
		if err != nil {
			return opOutput{}, err
		}
		if out.Image != nil {
			a, err := saveArtifact(j.r.cfg.ArtifactsDir, j.id, op.Index, "screenshot", out.Image)
			if err != nil {
				return opOutput{}, err
			}
			return opOutput{text: a.String(), image: &domain.Image{MIMEType: a.MIMEType, Data: out.Image.Data, Artifact: a.Path, Caption: op.Target}}, nil
		}
		text, cut := capText(out.Text, j.r.cfg.OutputLimit)
		return opOutput{text: text, truncated: cut}, nil
	default:
		return opOutput{}, domain.Fail(domain.ErrInvalid, domain.CodeUnknownType, strconv.Quote(string(op.Type)))
	}
}

func capText(s string, limit int) (string, bool) {
	if limit > 0 && len(s) > limit {
		return strings.ToValidUTF8(s[:limit], "") + fmt.Sprintf("\n[... output cut: %d of %d bytes kept]", limit, len(s)), true
	}
	return s, false
}

// shellLine is the command line of a shell operation: exactly the script approval judged.
func shellLine(op patch.Operation) string { return patch.ShellScript(op) }

// gitConfigLimit bounds the repository configuration the guard reads; a bigger one is refused
// rather than read in part.
const gitConfigLimit = 1 << 20

// git runs git in the workspace with the git timeout, in the sandbox and without side doors:
// the repository's configuration is checked first (GitConfigGuard) and every program it could
// name is switched off (GitEnv). The ceiling keeps git from finding a repository above the
// workspace; the identity makes commits independent of the host.
func (r *Runner) git(ctx context.Context, args ...string) (proc.Output, error) {
	list, err := r.runGit(ctx, false, nil, gitConfigLimit, "config", "-z", "--list")
	if err != nil {
		if list.ExitReason == proc.ExitNoSandbox || list.ExitReason == proc.ExitTimeout || list.ExitReason == proc.ExitCancelled {
			return list, err
		}
		return list, domain.FailWith(domain.ErrPermission, fmt.Errorf("%w: %s", err, strings.TrimSpace(list.Text)), domain.CodeGitConfigUnreadable)
	}
	if list.Truncated {
		return proc.Output{Sandbox: list.Sandbox, ExitCode: -1, ExitReason: proc.ExitStart},
			domain.Fail(domain.ErrPermission, domain.CodeGitConfigTooLarge, gitConfigLimit)
	}
	extra, err := domain.GitConfigGuard(list.Text)
	if err != nil {
		return proc.Output{Sandbox: list.Sandbox, ExitCode: -1, ExitReason: proc.ExitStart}, err
	}
	return r.runGit(ctx, true, extra, r.cfg.OutputLimit, args...)
}

func (r *Runner) runGit(ctx context.Context, writable bool, extra []domain.GitConfig, limit int, args ...string) (proc.Output, error) {
	env := append(append([]string(nil), r.cfg.Env...), domain.GitEnv(extra)...)
	env = append(env,
		"GIT_CEILING_DIRECTORIES="+filepath.Dir(r.cfg.Workspace.Dir()),
		"GIT_AUTHOR_NAME="+r.cfg.GitAuthorName, "GIT_AUTHOR_EMAIL="+r.cfg.GitAuthorEmail,
		"GIT_COMMITTER_NAME="+r.cfg.GitAuthorName, "GIT_COMMITTER_EMAIL="+r.cfg.GitAuthorEmail,
	)
	return proc.Run(ctx, proc.Spec{
		Argv: append([]string{"git"}, args...), Dir: r.cfg.Workspace.Dir(), Env: env,
		Timeout: r.cfg.GitTimeout, Limit: limit,
		Sandbox: &r.cfg.Sandbox, Workspace: r.cfg.Workspace.Dir(), GitDirWritable: writable,
	})
}

// autoCommit stages everything and commits; it returns "" when there was nothing to commit.
func (r *Runner) autoCommit(ctx context.Context, jobID, prefix string, res *domain.Result) (string, error) {
	if out, err := r.git(ctx, "rev-parse", "--show-toplevel"); err != nil {
		return "", domain.FailWith(nil, errors.New(strings.TrimSpace(out.Text)), domain.CodeCommitNoRepository)
	}
	if out, err := r.git(ctx, "add", "-A"); err != nil {
		return "", domain.FailWith(nil, fmt.Errorf("%w: %s", err, strings.TrimSpace(out.Text)), domain.CodeCommitStep, "git add")
	}
	status, err := r.git(ctx, "status", "--porcelain")
	if err != nil {
		return "", domain.FailWith(nil, err, domain.CodeCommitStep, "git status")
	}
	if strings.TrimSpace(status.Text) == "" {
		return "", nil
	}
	msg := strings.TrimSpace(prefix + " " + jobID)
	var body strings.Builder
	for _, c := range res.Commands {
		if c.Success {
			fmt.Fprintf(&body, "- %s %s %s\n", c.Type, c.Action, oneLine(c.Target, 100))
		}
	}
	if out, err := r.git(ctx, "commit", "--no-verify", "-m", msg, "-m", strings.TrimSpace(body.String())); err != nil {
		return "", domain.FailWith(nil, fmt.Errorf("%w: %s", err, strings.TrimSpace(out.Text)), domain.CodeCommitStep, "git commit")
	}
	head, err := r.git(ctx, "rev-parse", "HEAD")
	if err != nil {
		return "", domain.FailWith(nil, err, domain.CodeCommitStep, "git rev-parse")
	}
	return strings.TrimSpace(head.Text), nil
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "…"
	}
	return s
}

// errorsIsAny reports whether err matches any of targets.
func errorsIsAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}
