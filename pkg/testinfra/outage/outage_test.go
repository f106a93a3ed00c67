package outage

import "testing"

func TestPlanCyclesThenRecovers(t *testing.T) {
	var p Plan[int]
	if _, down := p.Next(); down {
		t.Fatal("the zero plan is down")
	}
	p.Start(3, 500, 429)
	var got []int
	for {
		f, down := p.Next()
		if !down {
			break
		}
		got = append(got, f)
	}
	if len(got) != 3 || got[0] != 500 || got[1] != 429 || got[2] != 500 || p.Failed() != 3 {
		t.Fatalf("faults %v, failed %d", got, p.Failed())
	}
	p.Start(-1, 503)
	for range 10 {
		if f, down := p.Next(); !down || f != 503 {
			t.Fatalf("an open-ended outage ended: %d %v", f, down)
		}
	}
	p.Up()
	if _, down := p.Next(); down || p.Failed() != 13 {
		t.Fatalf("still down after Up, failed %d", p.Failed())
	}
}
