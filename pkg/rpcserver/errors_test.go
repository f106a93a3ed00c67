package rpcserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
)

var (
	errInvalid  = fault.New(fault.Invalid, "invalid")
	errGone     = fault.New(fault.NotFound, "not found")
	errDown     = fault.New(fault.Unavailable, "unavailable")
	errTampered = fault.WithReason(fault.DataLoss, "AUDIT_TAMPERED", "audit log tampered")
)

func TestToConnect(t *testing.T) {
	tests := []struct {
		err     error
		code    connect.Code
		message string
		logged  string
	}{
		{fmt.Errorf("text: %w: empty", errInvalid), connect.CodeInvalidArgument, "text: invalid: empty", ""},
		{fmt.Errorf("job x: %w", errGone), connect.CodeNotFound, "job x: not found", ""},
		{fmt.Errorf("redis 10.0.0.7:6379: %w", errDown), connect.CodeUnavailable, "svc: a dependency is unavailable; retry later", "svc.dependency_unavailable"},
		{fmt.Errorf("loop: %w", context.Canceled), connect.CodeCanceled, "loop: context canceled", ""},
		{fmt.Errorf("loop: %w", context.DeadlineExceeded), connect.CodeDeadlineExceeded, "loop: context deadline exceeded", ""},
		{errors.New("disk on fire at /var/secret"), connect.CodeInternal, "internal error", "svc.internal_error"},
		{fmt.Errorf("job x: %w", errTampered), connect.CodeDataLoss, "job x: audit log tampered", ""},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		err := ToConnect(context.Background(), slog.New(slog.NewJSONHandler(&buf, nil)), "svc", tt.err)
		var ce *connect.Error
		if !errors.As(err, &ce) || ce.Code() != tt.code || ce.Message() != tt.message {
			t.Errorf("%v: got %v", tt.err, err)
			continue
		}
		if tt.logged != "" && !strings.Contains(buf.String(), tt.logged) || tt.logged == "" && buf.Len() > 0 {
			t.Errorf("%v: log %q, want %q", tt.err, buf.String(), tt.logged)
		}
		// The caller's side reads the same kind (and reason) back.
		back := FromConnect(err)
		if fault.KindOf(back) != fault.KindOf(tt.err) || fault.ReasonOf(back) != fault.ReasonOf(tt.err) {
			t.Errorf("%v: round trip gives %v/%q", tt.err, fault.KindOf(back), fault.ReasonOf(back))
		}
	}
}

func TestFromConnectTransportErrors(t *testing.T) {
	if k := fault.KindOf(FromConnect(connect.NewError(connect.CodeUnavailable, errors.New("dial tcp 127.0.0.1:9: connection refused")))); k != fault.Unavailable {
		t.Errorf("connection refused: %v", k)
	}
	if k := fault.KindOf(FromConnect(errors.New("a bug of our own"))); k != fault.Internal {
		t.Errorf("a plain error: %v", k)
	}
	if k := fault.KindOf(FromConnect(connect.NewError(connect.CodeUnknown, errors.New("502 bad gateway")))); k != fault.Unavailable {
		t.Errorf("unknown code: %v", k)
	}
	if k := fault.KindOf(FromConnect(context.DeadlineExceeded)); k != fault.Deadline {
		t.Errorf("deadline: %v", k)
	}
	if FromConnect(nil) != nil || ToConnect(context.Background(), slog.New(slog.DiscardHandler), "svc", nil) != nil {
		t.Error("nil must stay nil")
	}
}

// A failure the user is told about travels with its code and arguments (ErrorInfo) and its text
// in the request's locale (LocalizedMessage); the Connect message stays English, and the
// caller finds the text again with fault.Text.
func TestToConnectInCarriesTheUsersText(t *testing.T) {
	texts := fault.Catalog{"NOT_APPROVED": {"ジョブ %[1]s は %[2]s で、承認されていません", "job %[1]s is %[2]s, not approved"}}
	errConflict := fault.New(fault.Precondition, "conflict")
	for _, tc := range []struct{ locale, lang, want string }{
		{"", "ja", "ジョブ job_1 は 保留中 で、承認されていません"},
		{"en", "en", "job job_1 is 保留中, not approved"},
	} {
		err := ToConnectIn(context.Background(), slog.New(slog.DiscardHandler), "svc",
			fmt.Errorf("claim job_1: %w", texts.New(errConflict, "NOT_APPROVED", "job_1", "保留中")), tc.locale)
		var ce *connect.Error
		if !errors.As(err, &ce) || ce.Code() != connect.CodeFailedPrecondition || ce.Message() != "claim job_1: job job_1 is 保留中, not approved" {
			t.Fatalf("%s: %v", tc.locale, err)
		}
		var info *errdetails.ErrorInfo
		var said *errdetails.LocalizedMessage
		for _, d := range ce.Details() {
			switch v, _ := d.Value(); v := v.(type) {
			case *errdetails.ErrorInfo:
				info = v
			case *errdetails.LocalizedMessage:
				said = v
			}
		}
		if info == nil || info.GetReason() != "NOT_APPROVED" || info.GetMetadata()["code"] != "NOT_APPROVED" ||
			info.GetMetadata()["arg1"] != "job_1" || info.GetMetadata()["arg2"] != "保留中" {
			t.Errorf("%s: error info %v", tc.locale, info)
		}
		if said == nil || said.GetLocale() != tc.lang || said.GetMessage() != tc.want {
			t.Errorf("%s: localized message %v", tc.locale, said)
		}
		back := FromConnect(err)
		if got, ok := fault.Text(back, tc.locale); !ok || got != tc.want || fault.KindOf(back) != fault.Precondition || fault.ReasonOf(back) != "NOT_APPROVED" {
			t.Errorf("%s: back %q %v, kind %v reason %q", tc.locale, got, ok, fault.KindOf(back), fault.ReasonOf(back))
		}
	}
	// Without a message there is no text for the user.
	if _, ok := fault.Text(FromConnect(ToConnectIn(context.Background(), slog.New(slog.DiscardHandler), "svc", errGone, "ja")), "ja"); ok {
		t.Error("a bare sentinel got a text for the user")
	}
}
