// Package service is the public entry point of chat-mio: sessions, JobID allocation, commands, the approval conversation and the final reply.
package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	builtin "github.com/picoclaw-suite/picoclaw/config"

	"connectrpc.com/connect"

	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1/chatv1connect"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1/executorv1connect"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/heartbeat/v1/heartbeatv1connect"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/router/v1/routerv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid/auditfloor"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/llm/ollama"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/peers"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/rpc"
)

// Name is the service name used in logs, traces, metrics and health checks.
const Name = "chat-mio"

// Chat is the chat: section of the suite configuration.
type Chat struct {
	// PersonaFile is the first layer of the chat prompt.
	PersonaFile string `yaml:"persona_file"`
	// PolicyFile replaces the built-in policy layer when set.
	PolicyFile string `yaml:"policy_file"`
	// MemoryTurns bounds the short memory (user and assistant messages each count one).
	MemoryTurns int `yaml:"memory_turns"`
	// MemoryMaxChars bounds each remembered message.
	MemoryMaxChars int `yaml:"memory_max_chars"`
	// SessionTTL expires session flags and pending sets of idle sessions.
	SessionTTL time.Duration `yaml:"session_ttl"`
	// ReplyBudget is how long a reply waits for an execution; slower results are pushed.
	ReplyBudget     time.Duration `yaml:"reply_budget"`
	RouterTimeout   time.Duration `yaml:"router_timeout"`
	ApprovalTimeout time.Duration `yaml:"approval_timeout"`
	ExecuteTimeout  time.Duration `yaml:"execute_timeout"`
	ChatTimeout     time.Duration `yaml:"chat_timeout"`
	// OptionsTTL keeps deliberation options for /pick.
	OptionsTTL time.Duration `yaml:"options_ttl"`
	// DailySummary: at the daily cutover (00:00 local) the local chat model summarises each
	// chat's day into one note the next day's prompts carry (/forget clears it).
	DailySummary bool `yaml:"daily_summary"`
	// SummaryMaxChars bounds that note.
	SummaryMaxChars int `yaml:"summary_max_chars"`
}

// DefaultChat returns the defaults.
func DefaultChat() Chat {
	return Chat{
		PersonaFile:     "config/persona/mio.md",
		MemoryTurns:     20,
		MemoryMaxChars:  1000,
		SessionTTL:      30 * 24 * time.Hour,
		ReplyBudget:     20 * time.Second,
		RouterTimeout:   180 * time.Second,
		ApprovalTimeout: 15 * time.Second,
		ExecuteTimeout:  10 * time.Minute,
		ChatTimeout:     60 * time.Second,
		OptionsTTL:      24 * time.Hour,
		DailySummary:    true,
		SummaryMaxChars: 600,
	}
}

// Validate names the offending key.
func (c Chat) Validate() error {
	var errs config.Errors
	if strings.TrimSpace(c.PersonaFile) == "" {
		errs.Addf("persona_file", "must be set")
	}
	if c.MemoryTurns < 0 || c.MemoryTurns > 200 {
		errs.Addf("memory_turns", "must be 0..200, got %d", c.MemoryTurns)
	}
	if c.SummaryMaxChars < 0 || c.SummaryMaxChars > 4000 {
		errs.Addf("summary_max_chars", "must be 0..4000, got %d", c.SummaryMaxChars)
	}
	if c.MemoryMaxChars < 0 {
		errs.Addf("memory_max_chars", "must not be negative, got %d", c.MemoryMaxChars)
	}
	for key, d := range map[string]time.Duration{
		"session_ttl": c.SessionTTL, "reply_budget": c.ReplyBudget, "router_timeout": c.RouterTimeout,
		"approval_timeout": c.ApprovalTimeout, "execute_timeout": c.ExecuteTimeout, "chat_timeout": c.ChatTimeout,
		"options_ttl": c.OptionsTTL,
	} {
		if d <= 0 {
			errs.Addf(key, "must be a positive duration, got %s", d)
		}
	}
	return errs.Err()
}

// Config is the configuration of chat-mio.
type Config struct {
	config.Common `yaml:",inline"`
	Chat          Chat               `yaml:"chat"`
	Agents        Agents             `yaml:"agents"`
	Ollama        llm.OllamaSettings `yaml:"ollama"`
	Models        Models             `yaml:"models"`
	// Images: max_bytes bounds an image a gateway sends (and so the request body).
	Images config.Images `yaml:"images"`

	// Wiring: listeners, log writer and telemetry handed over by tests and the embedded suite.
	rpcserver.Wiring `yaml:"-"`
	// ChatModel, when set, is Mio's chat model (embedded suite, tests); otherwise it is built
	// from agents.chat.
	ChatModel llm.Client `yaml:"-"`
	// Restarter, when set, restarts Ollama for this service and the others sharing it (the
	// embedded suite); otherwise one is made from ollama.restart_command.
	Restarter *ollama.Restarter `yaml:"-"`
}

// DefaultConfig returns the defaults of the spec.
func DefaultConfig() Config {
	return Config{Common: config.DefaultCommon(), Chat: DefaultChat(),
		Agents: Agents{Chat: llm.Config{Provider: llm.ProviderOllama, Model: "chat-v1:latest"}},
		Ollama: llm.DefaultOllamaSettings(), Images: config.DefaultImages()}
}

// Validate checks the configuration and names the offending key.
func (c *Config) Validate() error {
	var errs config.Errors
	errs.Add(c.Common.Validate())
	errs.Add(config.CheckLinked("state.engine", c.State.Engine))
	errs.Add(config.Prefix("chat", c.Chat.Validate()))
	errs.Add(c.validateModel())
	errs.Add(c.validateVision())
	errs.Add(c.Images.Validate())
	return errs.Err()
}

func readOptional(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	// A default path that is not on disk reads the built-in copy.
	b, _, err := builtin.ReadFile(path)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// sessionStore is the session store with its readiness check.
type sessionStore interface {
	app.SessionStore
	Ping(ctx context.Context) error
}

// openState opens the session store and the JobID allocator on the configured state engine:
// Redis, or the embedded SQLite file (no Redis client at all then). Readiness checks the engine.
func openState(ctx context.Context, cfg Config, srv *rpcserver.Server, floor jobid.Floor) (sessionStore, app.JobIDs, func(), error) {
	if cfg.State.SQLite() {
		return openSQLiteState(ctx, cfg, srv, floor)
	}
	return openRedisState(cfg, srv, floor)
}

// Run serves chat-mio until ctx is cancelled.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	persona, err := readOptional(cfg.Chat.PersonaFile)
	if err != nil {
		return fmt.Errorf("chat.persona_file: %w", err)
	}
	policy, err := readOptional(cfg.Chat.PolicyFile)
	if err != nil {
		return fmt.Errorf("chat.policy_file: %w", err)
	}
	// A gateway sends an image of up to images.max_bytes in the request.
	srv, err := rpcserver.Start(ctx, rpcserver.Setup{Name: Name, Common: cfg.Common, Wiring: cfg.Wiring,
		MaxBodyBytes: cfg.Images.MaxBytes + 1<<20})
	if err != nil {
		return err
	}
	loc := srv.Location()
	log := srv.Logger()
	metrics := llm.NewMetrics(srv.Registry())
	restarter := cfg.restarter(log)
	model := cfg.ChatModel
	if model == nil {
		if model, err = buildModel(cfg, restarter, log, metrics.Observe, srv.Telemetry().TracerProvider); err != nil {
			return err
		}
		// A missing model is logged with the command that installs it; Mio starts anyway and
		// tells each user what to run until it is there.
		ollama.CheckAtStart(ctx, cfg.chatModelConfig(), "chat", log)
	}
	vision, err := buildVision(cfg, restarter, log, metrics.Observe, srv.Telemetry().TracerProvider)
	if err != nil {
		return srv.Abort(ctx, err)
	}
	if vision != nil {
		// The vision model is checked the same way (a cloud one is skipped).
		ollama.CheckAtStart(ctx, cfg.visionModelConfig(), "vision", log)
	}
	// Mio beats as the chat agent, busy while the chat model writes a reply.
	model = llm.Tracked(model, srv.Agent("chat", "Mio"))
	base, err := rpcserver.ClientOptions(srv.Telemetry(), cfg.Chat.ApprovalTimeout)
	if err != nil {
		return fmt.Errorf("client options: %w", err)
	}
	// Each peer gets a token made out to it.
	copts := func(target string) []connect.ClientOption {
		return append(slices.Clip(base), svcauth.Client(srv.Credentials(), target))
	}
	hc := rpcserver.NewHTTPClient()
	defer hc.CloseIdleConnections()
	approvals := approvalv1connect.NewApprovalServiceClient(hc, cfg.Services.Approval.URL, copts(svcauth.Approval)...)
	sessions, jobs, closeState, err := openState(ctx, cfg, srv, auditfloor.New(approvals))
	if err != nil {
		return srv.Abort(ctx, err)
	}
	defer closeState()
	gw := peers.Gateways{ByChannel: map[string]gatewayv1connect.NotificationServiceClient{
		"line":  gatewayv1connect.NewNotificationServiceClient(hc, cfg.Services.GatewayLine.URL, copts(svcauth.GatewayLine)...),
		"slack": gatewayv1connect.NewNotificationServiceClient(hc, cfg.Services.GatewaySlack.URL, copts(svcauth.GatewaySlack)...),
		// The terminal (picoclaw chat / run) serves notifications for cli: sessions.
		"cli": gatewayv1connect.NewNotificationServiceClient(hc, cfg.Services.CLI.URL, copts(svcauth.CLI)...),
	}}
	a, err := app.New(app.Config{
		Locale: domain.ParseLocale(cfg.Locale, domain.JA), Location: loc, Persona: persona, Policy: policy,
		MemoryTurns: cfg.Chat.MemoryTurns, MemoryClip: cfg.Chat.MemoryMaxChars, ReplyBudget: cfg.Chat.ReplyBudget,
		RouterTimeout: cfg.Chat.RouterTimeout, ApprovalTimeout: cfg.Chat.ApprovalTimeout,
		ExecuteTimeout: cfg.Chat.ExecuteTimeout, ChatTimeout: cfg.Chat.ChatTimeout, OptionsTTL: cfg.Chat.OptionsTTL,
		DailySummary: cfg.Chat.DailySummary, NoteMaxChars: cfg.Chat.SummaryMaxChars,
		Tracer: srv.Telemetry().Tracer("chat-mio"), Vision: vision,
	}, sessions, jobs, app.Peers{
		Router:    peers.Router{Client: routerv1connect.NewRouterServiceClient(hc, cfg.Services.RouterShiro.URL, copts(svcauth.RouterShiro)...)},
		Approvals: peers.Approvals{Client: approvals},
		Executor:  peers.Executor{Client: executorv1connect.NewExecutorServiceClient(hc, cfg.Services.Executor.URL, copts(svcauth.Executor)...)},
		Heartbeat: peers.Heartbeat{Client: heartbeatv1connect.NewHeartbeatServiceClient(hc, cfg.Services.Heartbeat.URL, copts(svcauth.Heartbeat)...)},
		Images:    peers.Approvals{Client: approvals},
	}, model, gw, log)
	if err != nil {
		return err
	}
	srv.Mount(chatv1connect.NewChatServiceHandler(&rpc.Handler{App: a, Log: log}, srv.HandlerOptions()...))
	a.StartCutover()
	runErr := srv.Run(ctx)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return errors.Join(runErr, a.Close(cctx))
}
