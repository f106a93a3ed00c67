// Package app holds chat-mio's use cases: handling one inbound message (command or
// conversation), the approval conversation and delivering results.
//
// chat-mio is an orchestrator whose inputs and outputs are the peers' API contracts, so the
// peer ports are the generated Connect client interfaces and the messages travel as the
// generated types; the rules that are chat-mio's own live in domain.
package app

import (
	"context"
	"time"

	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1/executorv1connect"
	gatewayv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/heartbeat/v1/heartbeatv1connect"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/router/v1/routerv1connect"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

// SessionStore keeps session state. Every mutation is a single atomic store operation, so
// concurrent messages of one session never lose each other's updates.
type SessionStore interface {
	// Load returns the session with today's memory (day is domain.MemoryDay) bounded to the last
	// memoryTurns entries.
	Load(ctx context.Context, id, day string, memoryTurns int) (domain.Session, error)
	SetLocalOnly(ctx context.Context, id string, on bool) error
	SetPrevRoute(ctx context.Context, id, route string) error
	AddPending(ctx context.Context, id, jobID string) error
	RemovePending(ctx context.Context, id, jobID string) error
	// AppendTurns adds turns to the day's memory and trims it to the last memoryTurns entries.
	AppendTurns(ctx context.Context, id, day string, memoryTurns int, turns ...domain.Turn) error
	// SaveOptions stores deliberation proposals (opaque bytes) for /pick.
	SaveOptions(ctx context.Context, jobID string, data []byte, ttl time.Duration) error
	// LoadOptions returns them, or domain.ErrNotFound.
	LoadOptions(ctx context.Context, jobID string) ([]byte, error)
	// SaveReply keeps the reply to an inbound event (opaque bytes) so a redelivered event gets
	// the same answer instead of a second turn.
	SaveReply(ctx context.Context, eventID string, data []byte, ttl time.Duration) error
	// LoadReply returns it, or domain.ErrNotFound.
	LoadReply(ctx context.Context, eventID string) ([]byte, error)
}

// JobIDs allocates JobIDs (pkg/jobid.Allocator).
type JobIDs interface {
	Next(ctx context.Context) (string, error)
}

// Notifier pushes messages to a session outside of a reply (gateway NotificationService).
type Notifier interface {
	Push(ctx context.Context, req *gatewayv1.PushRequest) error
}

// Peers are the Connect clients of the services chat-mio orchestrates.
type Peers struct {
	Router    routerv1connect.RouterServiceClient
	Approval  approvalv1connect.ApprovalServiceClient
	Executor  executorv1connect.ExecutorServiceClient
	Heartbeat heartbeatv1connect.HeartbeatServiceClient
}
