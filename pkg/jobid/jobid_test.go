package jobid

import (
	"context"
	"regexp"
	"testing"

	"go.opentelemetry.io/otel/baggage"
)

// canonical is the JobID's canonical form as SPEC §3 writes it; Valid checks it by hand.
var canonical = regexp.MustCompile(`^job_[0-9]{8}_(?:[0-9]{3,}|[0-9a-f]{8})$`)

// Valid answers as the pattern does, for every input.
func FuzzValidIsThePattern(f *testing.F) {
	for _, s := range []string{"job_20261121_001", "job_20261121_1234", "job_20261121_deadbeef", "job_20261121_deadbee",
		"job_20261121_DEADBEEF", "job_20261121_01", "job_2026112_001", "job_20261121_00x", "job_20261121_001\n",
		"job_2026112a_001", "job_20261121-001", "xjob_20261121_001", "job_20261121_", "job_20261121_0123456789abcdef", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Valid(s), canonical.MatchString(s); got != want {
			t.Fatalf("Valid(%q) = %v, the pattern says %v", s, got, want)
		}
	})
}

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

// Setting the id a context carries already keeps the context; another id, or the same one with
// properties, replaces it.
func TestWithJobIDKeepsAContextThatCarriesIt(t *testing.T) {
	ctx := WithJobID(context.Background(), "job_20261121_001")
	if WithJobID(ctx, "job_20261121_001") != ctx {
		t.Error("the same id made a new context")
	}
	other := WithJobID(ctx, "job_20261121_002")
	if FromContext(other) != "job_20261121_002" || FromContext(ctx) != "job_20261121_001" {
		t.Errorf("ids: %q, %q", FromContext(other), FromContext(ctx))
	}
	p, err := baggage.NewKeyValuePropertyRaw("p", "1")
	if err != nil {
		t.Fatal(err)
	}
	m, err := baggage.NewMemberRaw(BaggageKey, "job_20261121_001", p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := baggage.New(m)
	if err != nil {
		t.Fatal(err)
	}
	withProps := baggage.ContextWithBaggage(context.Background(), b)
	if got := baggage.FromContext(WithJobID(withProps, "job_20261121_001")).Member(BaggageKey); len(got.Properties()) != 0 {
		t.Errorf("the member kept its properties: %v", got)
	}
}
