package llm

import (
	"fmt"
	"testing"
)

func TestFailureTexts(t *testing.T) {
	if err := FailureTexts.Check(); err != nil {
		t.Fatal(err)
	}
	if err := FailureTexts.CheckLanguages("API"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		err  error
		want string
	}{
		{fmt.Errorf("call: %w", ErrRateLimited), FailureRateLimited},
		{ErrUnauthenticated, FailureUnauthenticated},
		{ErrTimeout, FailureTimeout},
		{ErrUnavailable, FailureServerError},
		{ErrLocalOnly, FailureLocalOnly},
		{ErrNoAPIKey, FailureNoAPIKey},
		{ErrModelUnavailable, FailureModelUnavailable},
		{ErrBadResponse, FailureBadResponse},
		{ErrRejected, FailureRejected},
		{fmt.Errorf("something else"), FailureOther},
	}
	for _, tt := range tests {
		if got := FailureCode(Code(tt.err)); got != tt.want {
			t.Errorf("%v: %q, want %q", tt.err, got, tt.want)
		}
	}
	for _, code := range []string{"", "unknown_order", "llm.rate_limited"} {
		if got := FailureCode(code); got != "" {
			t.Errorf("%q: %q, want none", code, got)
		}
	}
}
