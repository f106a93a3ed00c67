package heartbeat

import (
	"errors"
	"testing"
)

// The tracker sits on every RPC's path: Begin+End must stay cheap.
func BenchmarkTrackerBeginEnd(b *testing.B) {
	tr := NewTracker(nil)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			tr.Begin("job_20260101_001").End(nil)
		}
	})
}

// One tick of coder-order: the service and its three orders.
func BenchmarkSenderHeartbeats(b *testing.B) {
	s, err := NewSender(Config{Service: "coder-order"})
	if err != nil {
		b.Fatal(err)
	}
	s.Agent("order1", "Aka").Begin("job_20260101_001")
	s.Agent("order2", "Ao").RecordError(errors.New("openai: 429"))
	s.Agent("order3", "Gin")
	b.ReportAllocs()
	for b.Loop() {
		if len(s.Heartbeats()) != 4 {
			b.Fatal("wrong number of beats")
		}
	}
}
