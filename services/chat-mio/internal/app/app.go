package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

// Config holds what the use cases need from the service configuration.
type Config struct {
	Locale   domain.Locale
	Location *time.Location
	// Persona is the first layer of the chat prompt (the persona file's text).
	Persona string
	// Policy is the second layer; empty means domain.DefaultPolicy for the reply's locale.
	Policy string
	// MemoryTurns bounds the short memory (entries, user and assistant each count one).
	MemoryTurns int
	// MemoryClip bounds each remembered text (runes).
	MemoryClip int
	// ReplyBudget is how long a reply waits for an execution before it answers and the result
	// follows as a push.
	ReplyBudget     time.Duration
	RouterTimeout   time.Duration
	ApprovalTimeout time.Duration
	ExecuteTimeout  time.Duration
	ChatTimeout     time.Duration
	// OptionsTTL keeps deliberation options available for /pick.
	OptionsTTL time.Duration
	// DailySummary has the local model summarise each chat's day at the cutover (StartCutover).
	DailySummary bool
	// NoteMaxChars bounds that summary (runes); default 600.
	NoteMaxChars int
	Now          func() time.Time
	// Tracer starts chat-mio's own spans (message handling, chat model calls); default no-op.
	Tracer trace.Tracer
	// Vision answers images (models.vision); nil: images are answered with how to set one up.
	Vision llm.Client
}

func (c *Config) defaults() {
	if c.Location == nil {
		c.Location = time.UTC
	}
	if c.Locale == "" {
		c.Locale = domain.JA
	}
	if c.MemoryTurns <= 0 {
		c.MemoryTurns = 20
	}
	if c.MemoryClip <= 0 {
		c.MemoryClip = 1000
	}
	if c.ReplyBudget <= 0 {
		c.ReplyBudget = 20 * time.Second
	}
	for _, d := range []*time.Duration{&c.RouterTimeout, &c.ExecuteTimeout} {
		if *d <= 0 {
			*d = 5 * time.Minute
		}
	}
	for _, d := range []*time.Duration{&c.ApprovalTimeout, &c.ChatTimeout} {
		if *d <= 0 {
			*d = time.Minute
		}
	}
	if c.OptionsTTL <= 0 {
		c.OptionsTTL = 24 * time.Hour
	}
	if c.NoteMaxChars <= 0 {
		c.NoteMaxChars = 600
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Tracer == nil {
		c.Tracer = noop.NewTracerProvider().Tracer("chat-mio")
	}
}

// App is chat-mio's use cases. It owns the goroutines that finish executions after a reply
// was sent; Close waits for them.
type App struct {
	cfg      Config
	store    SessionStore
	jobs     JobIDs
	peers    Peers
	model    llm.Client
	notifier Notifier
	log      *slog.Logger

	life   context.Context
	stop   context.CancelFunc
	wg     sync.WaitGroup
	closed sync.Once
}

// New builds the App.
func New(cfg Config, store SessionStore, jobs JobIDs, peers Peers, model llm.Client, notifier Notifier, log *slog.Logger) (*App, error) {
	if store == nil || jobs == nil || peers.Router == nil || peers.Approvals == nil || peers.Executor == nil ||
		peers.Heartbeat == nil || model == nil || notifier == nil || log == nil {
		return nil, errors.New("chat-mio app: every dependency is required")
	}
	cfg.defaults()
	life, stop := context.WithCancel(context.Background())
	return &App{cfg: cfg, store: store, jobs: jobs, peers: peers, model: model, notifier: notifier, log: log, life: life, stop: stop}, nil
}

// Close cancels work still running after its reply and waits for it, bounded by ctx.
func (a *App) Close(ctx context.Context) error {
	a.closed.Do(a.stop)
	done := make(chan struct{})
	go func() { a.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("chat-mio: background work still running: %w", ctx.Err())
	}
}

// turn is one inbound message being handled.
type turn struct {
	req   *chatv1.HandleMessageRequest
	loc   domain.Locale
	jobID string
	sess  domain.Session
	actor Actor
	now   time.Time
	day   string
	// request is the span context the message arrived in (the gateway's event, the terminal's
	// call), before the turn joined a job's trace.
	request trace.SpanContext
	result  *chatv1.HandleMessageResponse
	// failed is a transient failure that ends the turn without an answer (see fail).
	failed error
	// task is the text the conversation routed (for a cost confirmation's question).
	task string
	// confirmed is the estimate a person approved, passed to the router (cost confirmation).
	confirmed *CostEstimate
	// images are an execution's screenshots, shown with the next message said (its result).
	images []*commonv1.Image
	// memory is what the turn remembers (rememberRouted), written with its kept reply when the
	// turn ends with an answer (record).
	memory TurnRecord
}

// fail ends the turn without an answer: a peer the answer needs is unreachable for now. The
// caller gets the error (Unavailable) and a gateway tries the event again later.
func (t *turn) fail(err error) { t.failed = err }

func (t *turn) say(text string, actions ...*commonv1.Action) {
	t.result.Messages = append(t.result.Messages, &commonv1.ReplyMessage{Text: text, Actions: actions, JobId: t.result.JobId, Images: t.images})
	t.images = nil
}

// HandleMessage handles one inbound event: it takes the JobID from baggage (or allocates one),
// loads the session (and the reply already given to the event, answered again as it is) and
// either runs a command or the conversation; a turn that ends with an answer is recorded — its
// memory and its reply — in one write. Peer failures become user messages, except a transient failure
// of the peer a conversation needs (router-shiro unreachable or too slow), which is returned as
// ErrUnavailable so the gateway retries the event instead of answering with an error; a
// malformed request or an internal failure is returned as an error too.
func (a *App) HandleMessage(ctx context.Context, req *chatv1.HandleMessageRequest) (*chatv1.HandleMessageResponse, error) {
	if err := domain.ValidateSessionID(req.GetSessionId()); err != nil {
		return nil, err
	}
	if req.GetChannel() != "" && req.GetChannel() != domain.Channel(req.GetSessionId()) {
		return nil, fmt.Errorf("%w: channel %q does not match session %q", domain.ErrInvalid, req.GetChannel(), req.GetSessionId())
	}
	text := req.GetText()
	if act := req.GetAction(); act != nil {
		text = actionText(act)
	}
	cmd, cmdErr := domain.ParseCommand(text)
	if req.GetImage() != nil && req.GetAction() == nil {
		// A caption is a question about the picture, never a command (nor a job to join).
		cmd, cmdErr = domain.Command{}, nil
	}
	// The gateways allocate the JobID when the event arrives (and a button press or a typed
	// command about a job carries that job's id); a command about a job is that job's whatever
	// the caller said, and only a caller without an id (the terminal channel) gets a new one.
	id := jobid.FromContext(ctx)
	if job := commandJob(cmd, cmdErr); job != "" && job != id {
		id = job
		ctx = jobid.WithJobID(ctx, id)
		trace.SpanFromContext(ctx).SetAttributes(attribute.String(jobid.BaggageKey, id))
	}
	if !jobid.Valid(id) {
		next, err := a.allocate(ctx)
		if err != nil {
			return nil, err
		}
		id = next
		ctx = jobid.WithJobID(ctx, id)
		// The request's span started before the id existed; name the job on it too.
		trace.SpanFromContext(ctx).SetAttributes(attribute.String(jobid.BaggageKey, id))
	}
	now := a.cfg.Now()
	day := domain.MemoryDay(now, a.cfg.Location)
	// One read, under the message's JobID: the session, and the reply already given to the event.
	sess, kept, loadErr := a.store.LoadTurn(ctx, req.GetSessionId(), day, a.cfg.MemoryTurns, replyKey(req))
	// A gateway redelivers an event whose answer it could not send (or after a crash): answer
	// with the reply already given instead of running the turn again (a new proposal would
	// collide with the job already waiting for approval).
	if cached := a.cachedReply(ctx, replyKey(req), kept); cached != nil {
		return cached, nil
	}
	request := trace.SpanContextFromContext(ctx)
	// A command about an existing job runs in the job's trace (a child of the job's stored
	// context, linked to this request), so the decision, the execution and the pushed result
	// join the job's one trace; anything else is this request's trace.
	ctx, span := telemetry.JoinTrace(ctx, a.cfg.Tracer, a.jobTrace(ctx, cmd, cmdErr), "chat.handle_message", trace.WithAttributes(
		attribute.String("session_id", req.GetSessionId()), attribute.String("event_id", req.GetEventId())))
	defer span.End()
	t := &turn{
		req:     req,
		loc:     domain.ParseLocale(req.GetLocale(), a.cfg.Locale),
		jobID:   id,
		actor:   Actor{ID: req.GetUserId(), Channel: domain.Channel(req.GetSessionId()), SessionID: req.GetSessionId()},
		now:     now,
		day:     day,
		request: request,
		result:  &chatv1.HandleMessageResponse{JobId: id, TraceParent: telemetry.TraceParent(ctx)},
	}
	// message.replied says all of this at the end; info has one line per message.
	a.log.DebugContext(ctx, "message.received", slog.String("session_id", req.GetSessionId()),
		slog.String("channel", t.actor.Channel), slog.String("event_id", req.GetEventId()),
		slog.Bool("action", req.GetAction() != nil))

	if loadErr != nil {
		a.log.WarnContext(ctx, "session.degraded", slog.String("session_id", req.GetSessionId()), slog.Any("error", loadErr))
		sess = domain.Session{ID: req.GetSessionId(), Degraded: true}
	}
	t.sess = sess

	switch {
	case req.GetImage() != nil && req.GetAction() == nil:
		a.seeImage(ctx, t)
	case errors.Is(cmdErr, domain.ErrUsage):
		a.log.InfoContext(ctx, "command.usage", slog.String("command", cmd.Name), slog.Any("error", cmdErr))
		t.say(domain.UsageFor(t.loc, cmd.Name))
	case cmd.Kind != domain.CmdNone:
		a.command(ctx, t, cmd)
	case strings.TrimSpace(text) == "":
		t.say(domain.T(t.loc, domain.MsgEmpty))
	default:
		a.converse(ctx, t, text)
	}
	if t.failed != nil {
		// Nothing is said, kept or remembered: the redelivered event runs the turn again.
		a.log.WarnContext(ctx, "message.deferred", slog.String("session_id", req.GetSessionId()),
			slog.String("event_id", req.GetEventId()), slog.Any("error", t.failed))
		span.SetStatus(codes.Error, "deferred")
		return nil, t.failed
	}
	if t.sess.Degraded && len(t.result.Messages) > 0 {
		first := t.result.Messages[0]
		first.Text = domain.T(t.loc, domain.MsgStoreDown) + "\n\n" + first.Text
	}
	if err := ctx.Err(); err != nil {
		// The caller gave up (a gateway shutting down, or its deadline): whatever this turn
		// says now ("the model did not answer") is not its answer. Nothing is kept or
		// remembered, so the redelivered event runs the turn again.
		a.log.WarnContext(context.WithoutCancel(ctx), "message.abandoned", slog.String("session_id", req.GetSessionId()),
			slog.String("event_id", req.GetEventId()), slog.Any("error", err))
		span.SetStatus(codes.Error, "abandoned")
		return nil, err
	}
	span.SetAttributes(attribute.String("reply_job_id", t.result.GetJobId()), attribute.Bool("async_pending", t.result.GetAsyncPending()))
	a.record(ctx, t)
	a.log.InfoContext(ctx, "message.replied", slog.String("session_id", req.GetSessionId()),
		slog.String("channel", t.actor.Channel), slog.String("event_id", req.GetEventId()),
		slog.Bool("action", req.GetAction() != nil), slog.String("reply_job_id", t.result.GetJobId()),
		slog.Int("messages", len(t.result.Messages)), slog.Bool("async_pending", t.result.GetAsyncPending()))
	return t.result, nil
}

// replyTTL covers the gateways' redelivery windows (their dedupe keeps event ids 24 h).
const replyTTL = 24 * time.Hour

// replyKey names an inbound event within its session ("" when the caller gave no event id).
func replyKey(req *chatv1.HandleMessageRequest) string {
	if req.GetEventId() == "" {
		return ""
	}
	return req.GetSessionId() + "|" + req.GetEventId()
}

// cachedReply is the reply kept for the event (data, as LoadTurn read it), nil when there is
// none or it does not decode.
func (a *App) cachedReply(ctx context.Context, key string, data []byte) *chatv1.HandleMessageResponse {
	if key == "" || data == nil {
		return nil
	}
	var res chatv1.HandleMessageResponse
	if err := proto.Unmarshal(data, &res); err != nil {
		return nil
	}
	a.log.InfoContext(ctx, "message.redelivered", slog.String("event", key), slog.String("reply_job_id", res.GetJobId()))
	return &res
}

func hasImages(res *chatv1.HandleMessageResponse) bool {
	for _, m := range res.GetMessages() {
		if len(m.GetImages()) > 0 {
			return true
		}
	}
	return false
}

// keptForm is the reply as kept for a redelivery: its screenshots are named by artifact instead
// of carried again, so the kept reply stays small.
func keptForm(res *chatv1.HandleMessageResponse) ([]byte, error) {
	if hasImages(res) {
		res = proto.Clone(res).(*chatv1.HandleMessageResponse)
		for _, m := range res.GetMessages() {
			for _, im := range m.GetImages() {
				im.Data = nil
			}
		}
	}
	return proto.Marshal(res)
}

// record writes what an answered turn leaves behind — its memory (rememberRouted) and, for an
// event, its reply — in one write, so a redelivered event never finds a reply whose exchange
// was not remembered. It runs once the answer is certain: a deferred or abandoned turn writes
// nothing. The write is not cancelled with the request: the answer is being returned.
func (a *App) record(ctx context.Context, t *turn) {
	rec := t.memory
	if key := replyKey(t.req); key != "" {
		data, err := keptForm(t.result)
		if err != nil {
			a.log.WarnContext(ctx, "message.reply_not_kept", slog.String("event", key), slog.Any("error", err))
		} else {
			rec.EventID, rec.Reply, rec.ReplyTTL = key, data, replyTTL
		}
	}
	if rec.Empty() {
		return
	}
	err := a.store.RecordTurn(context.WithoutCancel(ctx), t.sess.ID, rec)
	if err == nil {
		return
	}
	switch {
	case len(rec.Turns) > 0:
		a.log.WarnContext(ctx, "session.memory_failed", slog.Any("error", err))
	case rec.Route != "":
		a.log.WarnContext(ctx, "session.set_route_failed", slog.Any("error", err))
	}
	if rec.EventID != "" {
		a.log.WarnContext(ctx, "message.reply_not_kept", slog.String("event", rec.EventID), slog.Any("error", err))
	}
}

// allocate draws a JobID for a caller that brought none. The draw runs in a trace of its own,
// linked to the request: its spans (the Redis counter) start before the id exists and could not
// carry it, while every span of the job's trace does.
func (a *App) allocate(ctx context.Context) (string, error) {
	actx, span := a.cfg.Tracer.Start(ctx, "jobid.allocate", trace.WithNewRoot(), trace.WithLinks(trace.LinkFromContext(ctx)))
	defer span.End()
	id, err := a.jobs.Next(actx)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "job id allocation failed")
		return "", fmt.Errorf("allocate job id: %w", err)
	}
	// Not job_id: the job's spans are exactly its trace.
	span.SetAttributes(attribute.String("jobid.allocated", id))
	return id, nil
}

// commandJob is the existing job a command is about ("" for none, and for a command that did
// not parse).
func commandJob(cmd domain.Command, err error) string {
	if err != nil || !jobid.Valid(cmd.JobID) {
		return ""
	}
	switch cmd.Kind {
	case domain.CmdApprove, domain.CmdDeny, domain.CmdPick, domain.CmdRetry:
		return cmd.JobID
	}
	return ""
}

// jobTrace is the stored trace context of the job a command is about: approval's record of it,
// or for /pick (a deliberation has no approval record yet) the kept options. "" when there is
// none or it cannot be read now: the turn then runs in the request's trace.
func (a *App) jobTrace(ctx context.Context, cmd domain.Command, err error) string {
	id := commandJob(cmd, err)
	if id == "" {
		return ""
	}
	if cmd.Kind == domain.CmdPick {
		var opts options
		if data, err := a.store.LoadOptions(ctx, id); err == nil && json.Unmarshal(data, &opts) == nil {
			return opts.Trace
		}
		return ""
	}
	actx, cancel := context.WithTimeout(ctx, a.cfg.ApprovalTimeout)
	defer cancel()
	job, err := a.peers.Approvals.Job(actx, id)
	if err != nil {
		a.log.InfoContext(ctx, "chat.job_trace_unknown", slog.Any("error", err))
		return ""
	}
	return job.TraceParent
}

// actionText turns a button press into the command text it stands for, so buttons and typed
// commands share one path.
func actionText(a *commonv1.Action) string {
	id := strings.TrimSpace(a.GetJobId())
	switch a.GetKind() {
	case commonv1.ActionKind_ACTION_KIND_APPROVE:
		return "/approve " + id
	case commonv1.ActionKind_ACTION_KIND_APPROVE_SIMILAR:
		return strings.TrimSpace("/approve " + id + " similar " + a.GetValue())
	case commonv1.ActionKind_ACTION_KIND_DENY:
		return strings.TrimSpace("/deny " + id + " " + a.GetValue())
	case commonv1.ActionKind_ACTION_KIND_PICK:
		return "/pick " + id + " " + a.GetValue()
	}
	return "/unknown-action"
}
