package app

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

type execOutcome struct {
	res Execution
	err error
}

// execute asks the executor to run an approved job. When the executor answers within the reply
// budget the result is the reply; otherwise the reply says the job is running and the result is
// pushed to the session when it arrives (async=true).
func (a *App) execute(ctx context.Context, t *turn, id string) (text string, async bool) {
	// The execution outlives the request when it is slow, so it runs on a context that keeps the
	// request's values (JobID baggage, trace) but not its cancellation, bounded by the App's life.
	ectx, cancel := context.WithTimeout(context.WithoutCancel(jobid.WithJobID(ctx, id)), a.cfg.ExecuteTimeout)
	stopOnClose := context.AfterFunc(a.life, cancel)
	// The outcome goes to the waiting reply unless the reply gave up first (then it is pushed).
	// Buffered, and decided under a lock, so a fast answer is never lost to the push path.
	handoff := make(chan execOutcome, 1)
	var mu sync.Mutex
	abandoned := false
	sessionID, loc := t.sess.ID, t.loc
	degraded := t.sess.Degraded
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer cancel()
		defer stopOnClose()
		res, err := a.peers.Executor.Execute(ectx, id, loc)
		if !degraded {
			if rerr := a.store.RemovePending(ectx, sessionID, id); rerr != nil {
				a.log.WarnContext(ectx, "session.pending_remove_failed", slog.Any("error", rerr))
			}
		}
		out := execOutcome{res: res, err: err}
		mu.Lock()
		if !abandoned {
			handoff <- out
			mu.Unlock()
			return
		}
		mu.Unlock()
		// The reply has already been sent: deliver the result through the gateway.
		msg := a.resultText(ectx, loc, id, out)
		pctx, pcancel := context.WithTimeout(context.WithoutCancel(ectx), a.cfg.ApprovalTimeout)
		defer pcancel()
		perr := a.notifier.Push(pctx, Notification{SessionID: sessionID, JobID: id, RetryKey: id + ":result", Text: msg, Images: out.res.Images})
		if perr != nil {
			a.log.ErrorContext(pctx, "notify.push_failed", slog.String("session_id", sessionID), slog.Any("error", perr))
			return
		}
		a.log.InfoContext(pctx, "notify.pushed", slog.String("session_id", sessionID))
	}()
	timer := time.NewTimer(a.cfg.ReplyBudget)
	defer timer.Stop()
	select {
	case out := <-handoff:
		t.images = append(t.images, out.res.Images...)
		return a.resultText(ctx, t.loc, id, out), false
	case <-ctx.Done():
	case <-timer.C:
		a.log.InfoContext(ctx, "execution.async", slog.Duration("reply_budget", a.cfg.ReplyBudget))
	}
	mu.Lock()
	defer mu.Unlock()
	select {
	case out := <-handoff: // it arrived while the budget ran out
		t.images = append(t.images, out.res.Images...)
		return a.resultText(ctx, t.loc, id, out), false
	default:
		abandoned = true
		return domain.T(t.loc, domain.MsgExecAsync, id), true
	}
}

// resultText turns an execution outcome into the user message; failures are logged in detail.
func (a *App) resultText(ctx context.Context, loc domain.Locale, id string, out execOutcome) string {
	if err := out.err; err != nil {
		a.log.ErrorContext(ctx, "execution.failed", slog.String("kind", errKind(err)), slog.Any("error", err))
		switch {
		case errors.Is(err, domain.ErrUnavailable):
			return domain.T(loc, domain.MsgExecutorDown, id)
		case domain.PeerMessage(err) != "",
			errors.Is(err, domain.ErrConflict), errors.Is(err, domain.ErrForbidden), errors.Is(err, domain.ErrNotFound):
			// The executor's words (or approval's, passed on) in the session's language.
			return domain.T(loc, domain.MsgExecFailed, id, domain.ClipTurn(domain.PeerText(loc, err), 300))
		}
		return domain.T(loc, domain.MsgExecFailed, id, domain.T(loc, domain.MsgInternal, id))
	}
	r := out.res
	a.log.InfoContext(ctx, "execution.finished", slog.Bool("success", r.Success),
		slog.Int("executed", r.Executed), slog.Int("failed", r.Failed))
	text := r.Text
	if text == "" {
		text = r.Summary
	}
	return domain.T(loc, domain.MsgExecuted, id, text)
}
