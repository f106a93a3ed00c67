// Package chatlink holds the channel-neutral types of a conversation with chat-mio: the request,
// reply and button types every channel shares, and their protobuf converters. The ChatService
// client is chatlink/chatclient.
package chatlink

import (
	"errors"
	"strings"
	"time"

	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
)

// Sentinel errors.
var (
	// ErrPermanent marks a failure that retrying will not fix.
	ErrPermanent = errors.New("permanent failure")
	// ErrInvalid marks input that can never be processed (a stored event that does not decode,
	// a notification for a session the channel does not have).
	ErrInvalid = errors.New("invalid")
)

// ActionKind is what a button does.
type ActionKind string

// Button kinds (mirroring picoclaw.common.v1.ActionKind).
const (
	ActionApprove ActionKind = "approve"
	ActionDeny    ActionKind = "deny"
	ActionPick    ActionKind = "pick"
	// ActionApproveSimilar approves and allows similar jobs for a while; Value is the time ("30m").
	ActionApproveSimilar ActionKind = "approve_similar"
)

// Action is a button offered with a reply, or a button press.
type Action struct {
	Kind  ActionKind `json:"kind"`
	JobID string     `json:"job_id"`
	Label string     `json:"label,omitempty"`
	Value string     `json:"value,omitempty"`
	// Trace is the W3C traceparent of the job's trace when the button was sent; a press continues
	// that trace, so one job stays one trace across the wait for a person.
	Trace string `json:"trace,omitempty"`
}

// Reply is one message from chat-mio.
type Reply struct {
	Text    string
	Actions []Action
	JobID   string
	// Approval is the same approval request as a card, for channels that show one.
	Approval *ApprovalCard `json:"approval,omitempty"`
	// Images are shown after the text.
	Images []Image `json:"images,omitempty"`
}

// Request is one inbound event for chat-mio.
type Request struct {
	SessionID  string
	UserID     string
	Text       string
	Action     *Action
	EventID    string
	ReceivedAt time.Time
	Locale     string
	IsGroup    bool
	// Image is a picture the user sent, fetched and checked by the channel; Text is its caption.
	Image *InboundImage
}

// InboundImage is a picture the user sent, for chat-mio's vision model.
type InboundImage struct {
	Data []byte
	// MIMEType is image/jpeg, image/png, image/gif or image/webp.
	MIMEType string
	// Source names where it came from (line:<messageId>, slack:<fileId>), for the logs.
	Source string
}

// Response is chat-mio's answer.
type Response struct {
	JobID        string
	Replies      []Reply
	AsyncPending bool
	// ActionApplied: the decision the event carried was applied (its buttons may close).
	ActionApplied bool
	// TraceParent is the job's trace the turn ran in (W3C traceparent); the reply's buttons
	// carry it, so a press continues that trace. Empty: the request's own.
	TraceParent string
}

// RepliesFromProto maps reply messages (also used by the notification API).
func RepliesFromProto(msgs []*commonv1.ReplyMessage) []Reply {
	out := make([]Reply, 0, len(msgs))
	for _, m := range msgs {
		r := Reply{Text: m.GetText(), JobID: m.GetJobId(), Approval: cardFromProto(m.GetApproval())}
		var left []Image
		r.Images, left = imagesFromProto(m.GetImages())
		for _, im := range left {
			if im.Artifact != "" {
				r.Text = strings.TrimSpace(r.Text + "\n" + im.Artifact)
			}
		}
		for _, a := range m.GetActions() {
			if k, ok := kindFromProto(a.GetKind()); ok {
				job := a.GetJobId()
				if job == "" {
					job = m.GetJobId()
				}
				r.Actions = append(r.Actions, Action{Kind: k, JobID: job, Label: a.GetLabel(), Value: a.GetValue()})
			}
		}
		out = append(out, r)
	}
	return out
}

// ActionToProto maps a button press.
func ActionToProto(a Action) *commonv1.Action {
	k := commonv1.ActionKind_ACTION_KIND_PICK
	switch a.Kind {
	case ActionApprove:
		k = commonv1.ActionKind_ACTION_KIND_APPROVE
	case ActionDeny:
		k = commonv1.ActionKind_ACTION_KIND_DENY
	case ActionApproveSimilar:
		k = commonv1.ActionKind_ACTION_KIND_APPROVE_SIMILAR
	}
	return &commonv1.Action{Kind: k, JobId: a.JobID, Value: a.Value}
}

func kindFromProto(k commonv1.ActionKind) (ActionKind, bool) {
	switch k {
	case commonv1.ActionKind_ACTION_KIND_APPROVE:
		return ActionApprove, true
	case commonv1.ActionKind_ACTION_KIND_DENY:
		return ActionDeny, true
	case commonv1.ActionKind_ACTION_KIND_PICK:
		return ActionPick, true
	case commonv1.ActionKind_ACTION_KIND_APPROVE_SIMILAR:
		return ActionApproveSimilar, true
	}
	return "", false
}

// Command is the typed form of an action: shown with its button, so the conversation reads the
// same with or without buttons, and what a user types instead of pressing.
func Command(a Action) string {
	switch a.Kind {
	case ActionApprove:
		return "/approve " + a.JobID
	case ActionDeny:
		return "/deny " + a.JobID
	case ActionApproveSimilar:
		if a.Value != "" {
			return "/approve " + a.JobID + " similar " + a.Value
		}
		return "/approve " + a.JobID + " similar"
	default:
		if a.Value != "" {
			return "/pick " + a.JobID + " " + a.Value
		}
		return "/pick " + a.JobID
	}
}
