package jobid

import (
	"context"
	"testing"
)

func TestNormalize(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"job_20261121_001", "job_20261121_001", true},
		{"  JOB_20261121_042\n", "job_20261121_042", true},
		{"job_20261121_1234", "job_20261121_1234", true},
		{"job_20261121_deadbeef", "job_20261121_deadbeef", true},
		{"Job_20261121_DEADBEEF", "job_20261121_deadbeef", true},
		{"job_20261121_01", "", false},
		{"job_2026112_001", "", false},
		{"job_20261121_00x", "", false},
		{"20261121_001", "", false},
		{"", "", false},
		{"job_20261121_001; rm -rf /", "", false},
	}
	for _, tc := range cases {
		got, err := Normalize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("Normalize(%q) = %q, %v; want %q ok=%v", tc.in, got, err, tc.want, tc.ok)
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
