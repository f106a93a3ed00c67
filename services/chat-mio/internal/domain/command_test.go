package domain

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestParseCommand(t *testing.T) {
	tests := []struct {
		in    string
		want  Command
		usage string // expected Command.Name on a usage error; "-" = no error
	}{
		{in: "こんにちは", want: Command{}, usage: "-"},
		{in: "", want: Command{}, usage: "-"},
		{in: "/code fix it", want: Command{}, usage: "-"},
		{in: "/deliberate which design?", want: Command{}, usage: "-"},
		{in: "/ORDER3 review", want: Command{}, usage: "-"},
		{in: "/approve job_20260101_001", want: Command{Kind: CmdApprove, JobID: "job_20260101_001", Name: "/approve"}, usage: "-"},
		{in: "  /approve  JOB_20260101_0012 ", want: Command{Kind: CmdApprove, JobID: "job_20260101_0012", Name: "/approve"}, usage: "-"},
		{in: "/approve job_20260101_1a2b3c4d", want: Command{Kind: CmdApprove, JobID: "job_20260101_1a2b3c4d", Name: "/approve"}, usage: "-"},
		{in: "/approve", usage: "/approve"},
		{in: "/approve job_1", usage: "/approve"},
		{in: "/approve job_20260101_001 extra", usage: "/approve"},
		{in: "/approve job_20260101_001 similar", want: Command{Kind: CmdApprove, JobID: "job_20260101_001", Name: "/approve", Similar: true}, usage: "-"},
		{in: "/approve job_20260101_001 SIMILAR 2H", want: Command{Kind: CmdApprove, JobID: "job_20260101_001", Name: "/approve", Similar: true, SimilarTTL: 2 * time.Hour}, usage: "-"},
		{in: "/approve job_20260101_001 similar 25h", usage: "/approve"},
		{in: "/approve job_20260101_001 similar 30s", usage: "/approve"},
		{in: "/approve job_20260101_001 similar 30m extra", usage: "/approve"},
		{in: "/deny job_20260101_001", want: Command{Kind: CmdDeny, JobID: "job_20260101_001", Name: "/deny"}, usage: "-"},
		{in: "/deny job_20260101_001 wrong  file\nplease", want: Command{Kind: CmdDeny, JobID: "job_20260101_001", Reason: "wrong  file\nplease", Name: "/deny"}, usage: "-"},
		{in: "/deny", usage: "/deny"},
		{in: "/deny nope reason", usage: "/deny"},
		{in: "/pick job_20260101_001 2", want: Command{Kind: CmdPick, JobID: "job_20260101_001", Pick: 2, Name: "/pick"}, usage: "-"},
		{in: "/pick job_20260101_001", usage: "/pick"},
		{in: "/retry JOB_20260101_001", want: Command{Kind: CmdRetry, JobID: "job_20260101_001", Name: "/retry"}, usage: "-"},
		{in: "/retry", usage: "/retry"},
		{in: "/retry job_20260101_001 now", usage: "/retry"},
		{in: "/pick job_20260101_001 0", usage: "/pick"},
		{in: "/pick job_20260101_001 x", usage: "/pick"},
		{in: "/status", want: Command{Kind: CmdStatus, Name: "/status"}, usage: "-"},
		{in: "/status now", usage: "/status"},
		{in: "/local", want: Command{Kind: CmdLocal, Name: "/local"}, usage: "-"},
		{in: "/cloud", want: Command{Kind: CmdCloud, Name: "/cloud"}, usage: "-"},
		{in: "/HELP", want: Command{Kind: CmdHelp, Name: "/help"}, usage: "-"},
		{in: "/frobnicate", usage: ""},
		{in: "/auto-approve off", want: Command{Kind: CmdAutoApproveOff, Name: "/auto-approve"}, usage: "-"},
		{in: "/auto-approve status", want: Command{Kind: CmdAutoApproveStatus, Name: "/auto-approve"}, usage: "-"},
		{in: "/auto-approve on", want: Command{Kind: CmdAutoApproveOn, Name: "/auto-approve"}, usage: "-"},
		{in: "/auto-approve on ttl=30m paths=docs/,README.md tasks=docs,Review routes=code1,order2",
			want: Command{Kind: CmdAutoApproveOn, Name: "/auto-approve", Auto: AutoApproveOptions{TTL: 30 * time.Minute,
				Paths: []string{"docs/", "README.md"}, TaskTypes: []string{"docs", "review"}, Routes: []string{"CODE1", "CODE2"}}}, usage: "-"},
		{in: "/auto-approve", usage: "/auto-approve"},
		{in: "/auto-approve maybe", usage: "/auto-approve"},
		{in: "/auto-approve off now", usage: "/auto-approve"},
		{in: "/auto-approve on ttl=soon", usage: "/auto-approve"},
		{in: "/auto-approve on ttl=-5m", usage: "/auto-approve"},
		{in: "/auto-approve on tasks=deploy", usage: "/auto-approve"},
		{in: "/auto-approve on routes=SHELL", usage: "/auto-approve"},
		{in: "/auto-approve on color=red", usage: "/auto-approve"},
		{in: "/auto-approve on paths", usage: "/auto-approve"},
		{in: "/auto-approve on ttl=1m ttl=2m", usage: "/auto-approve"},
		{in: "/auto-approve on paths=docs/ ops=Shell",
			want: Command{Kind: CmdAutoApproveOn, Name: "/auto-approve", Auto: AutoApproveOptions{Paths: []string{"docs/"}, Ops: []string{"shell"}}}, usage: "-"},
		{in: "/auto-approve on ops=browser", usage: "/auto-approve"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseCommand(tt.in)
			if tt.usage == "-" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("got %+v, want %+v", got, tt.want)
				}
				return
			}
			if !errors.Is(err, ErrUsage) {
				t.Fatalf("want usage error, got %v (%+v)", err, got)
			}
			if got.Name != tt.usage {
				t.Fatalf("usage for %q, want %q", got.Name, tt.usage)
			}
		})
	}
}

func TestValidateSessionID(t *testing.T) {
	for id, ok := range map[string]bool{
		"line:U123": true, "line:C456": true, "slack:C1:1700000000.000100": true, "cli:alice": true,
		"": false, "line:": false, "line": false, "slack:C1": false, "slack:C1:": false, "mail:x": false,
		"line:U 1": false, "cli:a:b": false,
	} {
		err := ValidateSessionID(id)
		if (err == nil) != ok {
			t.Errorf("ValidateSessionID(%q) = %v, want ok=%v", id, err, ok)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("error %v is not ErrInvalid", err)
		}
	}
}

func TestMemoryDayCutsOverAtLocalMidnight(t *testing.T) {
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		utc  string
		want string
	}{
		{"2026-01-01T14:59:59Z", "20260101"}, // 23:59:59 JST
		{"2026-01-01T15:00:00Z", "20260102"}, // 00:00 JST
		{"2026-01-01T23:00:00Z", "20260102"},
	}
	for _, tt := range tests {
		ts, _ := time.Parse(time.RFC3339, tt.utc)
		if got := MemoryDay(ts, tokyo); got != tt.want {
			t.Errorf("MemoryDay(%s) = %s, want %s", tt.utc, got, tt.want)
		}
	}
}

func TestClipTurn(t *testing.T) {
	for _, tt := range []struct {
		in   string
		max  int
		want string
	}{{"こんにちは", 10, "こんにちは"}, {"こんにちは", 2, "こん…"}, {"abc", 0, "abc"}} {
		if got := ClipTurn(tt.in, tt.max); got != tt.want {
			t.Errorf("ClipTurn(%q,%d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

func TestRetryText(t *testing.T) {
	for _, tc := range []struct{ text, order, route, want string }{
		{"calc.go の Sub を直して", "order2", "CODE2", "/order2 calc.go の Sub を直して"},
		{"/code2 fix Sub", "order2", "CODE2", "/order2 fix Sub"},
		{"/CODE fix Sub", "", "CODE1", "/code1 fix Sub"},
		{"fix Sub", "", "", "/code fix Sub"},
		{"fix Sub", "coder9", "PLAN", "/plan fix Sub"},
	} {
		if got := RetryText(tc.text, tc.order, tc.route); got != tc.want {
			t.Errorf("RetryText(%q, %q, %q) = %q, want %q", tc.text, tc.order, tc.route, got, tc.want)
		}
	}
}
