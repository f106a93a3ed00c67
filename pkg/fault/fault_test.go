package fault

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
)

func TestKindOfAndPublic(t *testing.T) {
	notFound := New(NotFound, "not found")
	expired := WithReason(Precondition, "EXPIRED", "expired")
	down := New(Unavailable, "unavailable")
	tests := []struct {
		err          error
		kind         Kind
		status       int
		code, msg    string
		retryable    bool
		sameSentinel error
	}{
		{fmt.Errorf("job x: %w", notFound), NotFound, http.StatusNotFound, "not_found", "job x: not found", false, notFound},
		{fmt.Errorf("job x: %w", expired), Precondition, http.StatusConflict, "expired", "job x: expired", false, expired},
		{fmt.Errorf("dial postgres://u:secret@db: %w", down), Unavailable, http.StatusServiceUnavailable, "unavailable", "a dependency is unavailable; retry later", true, down},
		{Wrap(Invalid, errors.New("bad json")), Invalid, http.StatusBadRequest, "invalid_argument", "bad json", false, nil},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), Deadline, http.StatusGatewayTimeout, "deadline", "x: context deadline exceeded", true, nil},
		{errors.New("secret detail"), Internal, http.StatusInternalServerError, "internal", "internal error", false, nil},
	}
	for _, tt := range tests {
		if k := KindOf(tt.err); k != tt.kind || k.Retryable() != tt.retryable {
			t.Errorf("%v: kind %v (retryable %v)", tt.err, k, k.Retryable())
		}
		status, code, msg := Public(tt.err)
		if status != tt.status || code != tt.code || msg != tt.msg {
			t.Errorf("%v: public %d %q %q", tt.err, status, code, msg)
		}
		if tt.sameSentinel != nil && !errors.Is(tt.err, tt.sameSentinel) {
			t.Errorf("%v: errors.Is lost the sentinel", tt.err)
		}
	}
	if errors.Is(New(NotFound, "not found"), notFound) {
		t.Error("two sentinels with one text must differ")
	}
}

func TestTextIsLocalised(t *testing.T) {
	for k := Internal; k <= Deadline; k++ {
		ja, en := k.Text("ja"), k.Text("en")
		if ja == "" || en == "" || ja == en {
			t.Errorf("%v: ja %q en %q", k, ja, en)
		}
	}
	if Kind(200).Text("en") != Internal.Text("en") || Kind(200).String() != "internal" {
		t.Error("an unknown kind reads as internal")
	}
}
