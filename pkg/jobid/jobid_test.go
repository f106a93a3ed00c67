package jobid

import (
	"context"
	"testing"
)

func TestNormalize(t *testing.T) {
	// want is the normalized id; empty for an input Normalize must refuse.
	for in, want := range map[string]string{
		"job_20261121_001":           "job_20261121_001",
		"  JOB_20261121_042\n":       "job_20261121_042",
		"job_20261121_1234":          "job_20261121_1234",
		"job_20261121_deadbeef":      "job_20261121_deadbeef",
		"Job_20261121_DEADBEEF":      "job_20261121_deadbeef",
		"job_20261121_01":            "",
		"job_2026112_001":            "",
		"job_20261121_00x":           "",
		"20261121_001":               "",
		"":                           "",
		"job_20261121_001; rm -rf /": "",
	} {
		got, err := Normalize(in)
		if (err == nil) != (want != "") || got != want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestBaggageRoundTrip(t *testing.T) {
	ctx := WithJobID(context.Background(), "job_20261121_007")
	if got := FromContext(ctx); got != "job_20261121_007" {
		t.Fatalf("FromContext = %q", got)
	}
	if got := FromContext(context.Background()); got != "" {
		t.Fatalf("empty ctx gave %q", got)
	}
}
