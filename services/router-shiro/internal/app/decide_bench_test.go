package app

import (
	"context"
	"io"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
)

// BenchmarkDecide_RuleHit measures the whole decision path for inputs the rule dictionary
// decides: command parsing, channel policy, the dictionary and the router.decision log line
// (JSON, with job_id from baggage). Goal: ≤ 50 µs per decision.
func BenchmarkDecide_RuleHit(b *testing.B) {
	cfg := testConfig()
	r, err := New(cfg, defaultDictionary(b), &fakeModel{}, &fakeCoder{}, telemetry.NewLogger(io.Discard, "info", "router-shiro"))
	if err != nil {
		b.Fatal(err)
	}
	inputs := []Input{
		{JobID: "job_20260301_001", Channel: "line", Text: "このログを集計して傾向を教えて"},
		{JobID: "job_20260301_001", Channel: "line", Text: "nginxを再起動して"},
		{JobID: "job_20260301_001", Channel: "slack", Text: "make a plan for the database migration next week"},
		{JobID: "job_20260301_001", Channel: "slack", Text: "OAuth 2.1 の変更点を調べて"},
	}
	ctx := jobid.WithJobID(context.Background(), "job_20260301_001")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out := r.Decide(ctx, inputs[i%len(inputs)])
		if out.Decision.Source != "rule" {
			b.Fatalf("not a rule hit: %+v", out.Decision)
		}
	}
}
