package channel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1/chatv1connect"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/bearer"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink/chatclient"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid/auditfloor"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
)

// Spec is what a gateway service hands to Run: its configuration, already validated, and how
// to build its channel.
type Spec struct {
	// Service is the service name (gateway-line); Channel the channel's (line).
	Service, Channel string
	// Display is the channel's name as people write it (LINE).
	Display string
	// Common is the service's common configuration; its listen addresses are services.<Service>.
	Common   config.Common
	Wiring   Wiring
	Settings Settings
	// MaxImageBytes caps an image the channel fetches (images.max_bytes).
	MaxImageBytes int64
	// Build makes the channel once the runtime's parts exist; it mounts its webhooks with
	// env.HandlePublic and stores what they receive with env.Ingest.
	Build func(ctx context.Context, env Env) (Channel, error)
}

// Env is what the runtime offers a channel while it is built.
type Env struct {
	Log       *slog.Logger
	Telemetry *telemetry.Telemetry
	// Ingest stores verified inbound events.
	Ingest *Ingester
	// Once runs named sends at most once (marks beside the inbox, kept as long as it dedupes).
	Once *Once
	// HandlePublic mounts a handler on the public listener.
	HandlePublic func(method, pattern string, h http.Handler)
}

// Run serves a gateway until ctx is cancelled: the internal listener (notification API, health,
// metrics), the public one (the channel's webhooks, the dead-letter API), the inbox consumer
// (events → chat-mio → the outbox) and the outbox consumer (the outbox → the channel's API). The
// inbox, the outbox and the sent marks live in Redis, or in the SQLite state database when
// state.engine is sqlite (then the gateway opens no Redis connection for them).
func Run(ctx context.Context, spec Spec) error {
	cfg := spec.Common
	// The webhooks are the only public surface; the notification API stays internal.
	srv, err := rpcserver.Start(ctx, rpcserver.Setup{Name: spec.Service, Common: cfg, Public: true, Wiring: spec.Wiring})
	if err != nil {
		return err
	}
	creds := srv.Credentials()
	log := srv.Logger()
	tel := srv.Telemetry()
	if len(spec.Settings.AllowedUsers) == 0 {
		log.WarnContext(ctx, spec.Channel+".allowlist_empty", slog.String("key", spec.Channel+".allowed_users"),
			slog.String("effect", "every sender gets a refusal until user ids are listed"))
	}
	// A JobID counter lost with Redis starts above the audit store's ids of the day.
	floorOpts, err := rpcserver.ClientOptions(tel, 5*time.Second, svcauth.Client(creds, svcauth.Approval))
	if err != nil {
		return err
	}
	floor := auditfloor.New(approvalv1connect.NewApprovalServiceClient(rpcserver.NewHTTPClient(), cfg.Services.Approval.URL, floorOpts...))
	st, err := openState(ctx, cfg, srv.Location(), floor, log, srv.Telemetry().TracerProvider)
	if err != nil {
		return fmt.Errorf("%s: %w", spec.Service, err)
	}
	defer st.close()
	metrics, err := inbox.NewMetrics(srv.Registry())
	if err != nil {
		return err
	}
	inboxCfg := inbox.Config{Stream: cfg.Redis.KeyPrefix + "inbox:" + spec.Channel, Group: spec.Service, DedupeTTL: spec.Settings.Inbox.DedupeTTL,
		Metrics: metrics, Seal: creds.DeriveKey("inbox")}
	store, err := inbox.NewStoreOn(st.engine, inboxCfg)
	if err != nil {
		return err
	}
	// Every reply and notification is stored here before it is sent, under its send key.
	outboxCfg := inbox.Config{Stream: cfg.Redis.KeyPrefix + "outbox:" + spec.Channel, Group: spec.Service, DedupeTTL: spec.Settings.Inbox.DedupeTTL,
		Metrics: metrics, Seal: creds.DeriveKey("outbox")}
	outbox, err := inbox.NewStoreOn(st.engine, outboxCfg)
	if err != nil {
		return err
	}
	tokens, err := bearer.Parse(spec.Settings.ApproverTokens.Value())
	if err != nil {
		return fmt.Errorf("%s: PICOCLAW_APPROVAL_TOKENS: %w", spec.Service, err)
	}
	// The next JobID is drawn while the current event is stored, so a webhook's answer waits
	// for one trip to the state engine, not two.
	jobs := jobid.NewAhead(ctx, st.jobs)
	defer jobs.Wait()
	env := Env{
		Log: log, Telemetry: tel,
		Ingest:       NewIngester(spec.Channel, store, jobs, log, tel.TracerProvider, spec.Service, tel.Propagator),
		Once:         NewOnce(inbox.NewMarksOn(st.engine, cfg.Redis.KeyPrefix+spec.Channel+":sent:", spec.Settings.Inbox.DedupeTTL), spec.Channel, log),
		HandlePublic: srv.HandlePublic,
	}
	ch, err := spec.Build(ctx, env)
	if err != nil {
		return err
	}
	chatOpts, err := rpcserver.ClientOptions(tel, spec.Settings.ChatTimeout, svcauth.Client(creds, svcauth.ChatMio))
	if err != nil {
		return err
	}
	chat := chatclient.New(chatv1connect.NewChatServiceClient(rpcserver.NewHTTPClient(), cfg.Services.ChatMio.URL, chatOpts...), spec.Channel, creds)
	sends, err := NewSendMetrics(srv.Registry())
	if err != nil {
		return err
	}
	rt := NewRuntime(ch, RuntimeConfig{Locale: cfg.Locale, Allow: NewAllowlist(spec.Settings.AllowedUsers), Tracer: spec.Service, Outbox: outbox,
		MaxImageBytes: spec.MaxImageBytes, Metrics: sends},
		chat, log, tel.TracerProvider, tel.Propagator)
	consumer, err := inbox.NewConsumerOn(st.engine, inboxCfg, spec.Settings.Inbox.ConsumerConfig(srv.Replica(), rt.GiveUp, log), rt.Handle)
	if err != nil {
		return err
	}
	// A send that fails for a transient reason (the channel's API down, 429, 5xx) is retried
	// until max_age whatever max_attempts says, and nobody is told anything meanwhile: the
	// channel itself is what is failing.
	senderCfg := spec.Settings.Inbox.ConsumerConfig(spec.Service, nil, log)
	senderCfg.MaxAttempts = 0
	sender, err := inbox.NewConsumerOn(st.engine, outboxCfg, senderCfg, rt.Deliver)
	if err != nil {
		return err
	}
	for _, c := range []*inbox.Consumer{consumer, sender} {
		if err := c.EnsureGroup(ctx); err != nil {
			return fmt.Errorf("%s: %s: %w", spec.Service, st.where, err)
		}
	}
	srv.Mount(gatewayv1connect.NewNotificationServiceHandler(NewNotificationHandler(rt, spec.Display), srv.HandlerOptions()...))
	srv.AddReadiness(st.name, store.Ping)
	dead := &deadLetters{channel: spec.Channel, queues: map[string]*inbox.Store{QueueInbox: store, QueueOutbox: outbox}, ch: ch, log: log}
	dead.Register(srv.HandlePublic, tokens)

	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var errMu sync.Mutex
	var consumerErr error
	var running sync.WaitGroup
	for _, c := range []*inbox.Consumer{consumer, sender} {
		running.Go(func() {
			if err := c.Run(cctx); err != nil {
				errMu.Lock()
				consumerErr = errors.Join(consumerErr, err)
				errMu.Unlock()
				cancel()
			}
		})
	}
	consumed := make(chan struct{})
	go func() {
		running.Wait()
		close(consumed)
	}()
	// The server, and with it the telemetry, stops only once the consumer has finished the
	// events in hand: their last spans and logs are flushed, not lost in the shutdown.
	sctx, stopServer := context.WithCancel(context.WithoutCancel(ctx))
	defer stopServer()
	go func() {
		<-cctx.Done()
		<-consumed
		stopServer()
	}()
	err = srv.Run(sctx)
	cancel()
	<-consumed
	return errors.Join(err, consumerErr)
}

// state is where a gateway keeps its inbox and sent marks.
type state struct {
	engine inbox.Engine
	// jobs allocates JobIDs from the counter chat-mio shares (same engine, same key prefix).
	jobs *jobid.Daily
	// name names the readiness check, where the place in errors.
	name, where string
	close       func()
}

// openState opens the engine state.engine names: the SQLite state database at state.path
// (shared with every service of the process that opens the same file), or Redis.
func openState(ctx context.Context, cfg config.Common, loc *time.Location, floor jobid.Floor, log *slog.Logger, tp trace.TracerProvider) (state, error) {
	if !cfg.State.SQLite() {
		return openRedisState(cfg, loc, floor, log, tp)
	}
	return openSQLiteState(ctx, cfg, loc, floor, log)
}
