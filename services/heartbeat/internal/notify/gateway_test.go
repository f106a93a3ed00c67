package notify

import (
	"errors"
	"testing"
)

func TestGatewayURL(t *testing.T) {
	const line, slack = "http://line", "http://slack"
	tests := []struct {
		session string
		want    string
		ok      bool
	}{
		{"line:U0123", line, true},
		{"line:C0group", line, true},
		{"slack:C01:1700000000.000100", slack, true},
		{"cli:me", "", false},
		{"line:", "", false},
		{"", "", false},
		{"LINE:U0123", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.session, func(t *testing.T) {
			got, err := GatewayURL(tt.session, line, slack)
			if tt.ok != (err == nil) || got != tt.want {
				t.Fatalf("GatewayURL(%q) = %q, %v", tt.session, got, err)
			}
			if err != nil && !errors.Is(err, ErrUnsupportedSession) {
				t.Fatalf("error %v is not ErrUnsupportedSession", err)
			}
		})
	}
}
