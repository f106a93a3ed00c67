// Package rpc maps the Connect API of heartbeat onto its use cases.
package rpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/picoclaw-suite/picoclaw/pkg/enum"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	heartbeatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/heartbeat/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/heartbeat/v1/heartbeatv1connect"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/domain"
)

// Handler implements heartbeatv1connect.HeartbeatServiceHandler.
type Handler struct {
	App *app.Service
	Log *slog.Logger
}

var _ heartbeatv1connect.HeartbeatServiceHandler = (*Handler)(nil)

// Beat implements HeartbeatService.Beat.
func (h *Handler) Beat(ctx context.Context, req *heartbeatv1.BeatRequest) (*heartbeatv1.BeatResponse, error) {
	if req.GetHeartbeat() == nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("heartbeat is required"))
	}
	// A service reports for itself only: no one can pass as the executor and hide it.
	if caller := svcauth.CallerFrom(ctx); caller != "" && req.GetHeartbeat().GetService() != caller {
		return nil, connect.NewError(connect.CodePermissionDenied, fmt.Errorf("%s may not beat for %q", caller, req.GetHeartbeat().GetService()))
	}
	if err := h.App.Beat(ctx, BeatFromProto(req.GetHeartbeat())); err != nil {
		return nil, h.toConnect(ctx, err)
	}
	return &heartbeatv1.BeatResponse{}, nil
}

// Report implements HeartbeatService.Report.
func (h *Handler) Report(ctx context.Context, req *heartbeatv1.ReportRequest) (*heartbeatv1.ReportResponse, error) {
	r, err := h.App.Report(ctx, app.ParseLocale(req.GetLocale()))
	if err != nil {
		return nil, h.toConnect(ctx, err)
	}
	res := &heartbeatv1.ReportResponse{Text: r.Text, GeneratedAt: timestamppb.New(r.GeneratedAt)}
	for _, a := range r.Agents {
		res.Agents = append(res.Agents, AgentToProto(a))
	}
	return res, nil
}

// Watch implements HeartbeatService.Watch: every change of state until the client goes away or
// falls too far behind (then the stream ends with ResourceExhausted and the client re-watches).
func (h *Handler) Watch(ctx context.Context, req *heartbeatv1.WatchRequest, stream *connect.ServerStream[heartbeatv1.WatchResponse]) error {
	changes, cancel := h.App.Watch()
	defer cancel()
	// Send the headers now: once the client's call returns, the subscription is live.
	if err := stream.Send(nil); err != nil {
		return err
	}
	if req.GetIncludeCurrent() {
		agents, err := h.App.Current(ctx)
		if err != nil {
			return h.toConnect(ctx, err)
		}
		for _, a := range agents {
			if err := stream.Send(&heartbeatv1.WatchResponse{Agent: AgentToProto(a)}); err != nil {
				return err
			}
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ch, ok := <-changes:
			if !ok {
				return connect.NewError(connect.CodeResourceExhausted, errors.New("watcher fell behind; watch again"))
			}
			if err := stream.Send(&heartbeatv1.WatchResponse{Agent: AgentToProto(ch.Agent), PreviousState: StateToProto(ch.Previous)}); err != nil {
				return err
			}
		}
	}
}

// toConnect maps heartbeat's errors by their fault kind (pkg/rpcserver.ToConnect).
func (h *Handler) toConnect(ctx context.Context, err error) error {
	return rpcserver.ToConnect(ctx, h.Log, "heartbeat", err)
}

// BeatFromProto converts the wire form; the single current_job_id of older senders counts as
// the only job when the list is empty.
func BeatFromProto(hb *heartbeatv1.Heartbeat) domain.Beat {
	jobs := hb.GetCurrentJobIds()
	if len(jobs) == 0 && hb.GetCurrentJobId() != "" {
		jobs = []string{hb.GetCurrentJobId()}
	}
	kind := hb.GetKind()
	if kind == "" {
		kind = "service"
	}
	b := domain.Beat{
		AgentID:            hb.GetAgentId(),
		Alias:              hb.GetAlias(),
		Service:            hb.GetService(),
		Kind:               kind,
		Status:             StateFromProto(hb.GetStatus()),
		JobIDs:             jobs,
		MemoryMB:           hb.GetMemoryUsageMb(),
		LastTaskDurationMs: hb.GetLastTaskDurationMs(),
		ErrorMessage:       hb.GetErrorMessage(),
		ErrorCode:          hb.GetErrorCode(),
		Note:               hb.GetNote(),
		NoteEN:             hb.GetNoteEn(),
		Replica:            hb.GetReplicaId(),
		Leaving:            hb.GetLeaving(),
	}
	if hb.GetTimestamp() != nil {
		b.SentAt = hb.GetTimestamp().AsTime()
	}
	return b
}

// AgentToProto converts an agent's picture to the wire form.
func AgentToProto(a domain.Agent) *heartbeatv1.AgentStatus {
	b := a.Last
	hb := &heartbeatv1.Heartbeat{
		AgentId:            b.AgentID,
		Alias:              b.Alias,
		Status:             StateToProto(b.Status),
		CurrentJobId:       b.CurrentJobID(),
		CurrentJobIds:      b.JobIDs,
		MemoryUsageMb:      b.MemoryMB,
		LastTaskDurationMs: b.LastTaskDurationMs,
		ErrorMessage:       b.ErrorMessage,
		ErrorCode:          b.ErrorCode,
		Service:            b.Service,
		Kind:               b.Kind,
		Note:               b.Note,
		NoteEn:             b.NoteEN,
		ReplicaId:          b.Replica,
	}
	if !b.SentAt.IsZero() {
		hb.Timestamp = timestamppb.New(b.SentAt)
	}
	return &heartbeatv1.AgentStatus{
		Last: hb, State: StateToProto(a.State), LastSeen: timestamppb.New(a.LastSeen), StateSince: timestamppb.New(a.StateSince),
	}
}

var states = enum.New(map[domain.State]heartbeatv1.AgentState{
	domain.StateIdle:    heartbeatv1.AgentState_AGENT_STATE_IDLE,
	domain.StateBusy:    heartbeatv1.AgentState_AGENT_STATE_BUSY,
	domain.StateError:   heartbeatv1.AgentState_AGENT_STATE_ERROR,
	domain.StateTimeout: heartbeatv1.AgentState_AGENT_STATE_TIMEOUT,
})

// StateFromProto maps the wire enum; unknown values become "" and fail validation.
func StateFromProto(s heartbeatv1.AgentState) domain.State { return states.Domain(s) }

// StateToProto maps a state to the wire enum.
func StateToProto(s domain.State) heartbeatv1.AgentState { return states.Wire(s) }
