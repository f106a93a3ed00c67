package faults

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"
)

var plan = Plan{Messages: 6, Chats: 2} // chat 0: 1, 3, 5; chat 1: 2, 4, 6

func reply(p Plan, n int, text string) fakeline.Sent {
	return fakeline.Sent{Kind: "reply", ReplyToken: p.ReplyToken(n), Messages: []fakeline.Message{{Type: "text", Text: text}}, At: time.Now()}
}

func push(to, text string) fakeline.Sent {
	return fakeline.Sent{Kind: "push", To: to, Messages: []fakeline.Message{{Type: "text", Text: text}}, At: time.Now()}
}

func allAcked(p Plan) []bool {
	a := make([]bool, p.Messages+1)
	for n := 1; n <= p.Messages; n++ {
		a[n] = true
	}
	return a
}

func TestPlanPlacesMessagesInChats(t *testing.T) {
	p := Plan{Messages: 2000, Chats: 100}
	if p.Chat(1) != 0 || p.Seq(1) != 1 || p.Chat(100) != 99 || p.Chat(101) != 0 || p.Seq(101) != 2 || p.Seq(2000) != 20 {
		t.Fatal("placement")
	}
	if u := p.User(7); len(u) != 33 || !strings.HasPrefix(u, "U") {
		t.Fatalf("user id %q is not LINE-shaped", u)
	}
	if p.EventID(1) == p.EventID(2) || p.ReplyToken(1) == p.ReplyToken(2) {
		t.Fatal("ids repeat")
	}
}

// Every message answered once, in order, as reply or push: nothing to report.
func TestCleanRunPasses(t *testing.T) {
	c := NewChecker(plan)
	for n := 1; n <= plan.Messages; n++ {
		if n == 4 {
			c.Record(push(plan.User(plan.Chat(n)), plan.Answer(n)))
			continue
		}
		c.Record(reply(plan, n, plan.Answer(n)))
	}
	got := c.Tally(allAcked(plan))
	want := Tally{Sent: 6, Answered: 6, Replies: 5, Pushes: 1}
	if !reflect.DeepEqual(got, want) || !got.OK() {
		t.Fatalf("tally %+v, want %+v", got, want)
	}
	if c.Answered(allAcked(plan)) != 6 || c.Received() != 6 {
		t.Fatal("progress counts")
	}
}

func TestCheckerFindsEveryKindOfProblem(t *testing.T) {
	c := NewChecker(plan)
	acked := allAcked(plan)
	acked[6] = false // never acknowledged: not expected, and its answer is unexpected
	c.Record(reply(plan, 1, plan.Answer(1)))
	c.Record(push(plan.User(0), plan.Answer(1)))   // duplicate of 1
	c.Record(reply(plan, 3, "振り分け担当に接続できませんでした。")) // error reply instead of 3's answer
	c.Record(reply(plan, 2, plan.Answer(4)))       // 4's answer with 2's reply token
	c.Record(push(plan.User(1), plan.Answer(4)))
	c.Record(push(plan.User(1), plan.Answer(2))) // chat 1 answered 4 before 2
	c.Record(push(plan.User(0), "（Redis に接続できません）\n\n"+plan.Answer(5)))
	c.Record(push("Ustranger000000000000000000000000", "alert"))
	c.Record(push(plan.User(1), plan.Answer(6)))
	c.Record(push(plan.User(0), plan.Answer(2))) // 2's answer in chat 0

	got := c.Tally(acked)
	if got.Sent != 5 || got.Unacked != 1 {
		t.Errorf("sent %d, unacked %d", got.Sent, got.Unacked)
	}
	if got.Lost != 1 || !reflect.DeepEqual(got.LostSample, []int{3}) {
		t.Errorf("lost %d %v, want message 3", got.Lost, got.LostSample)
	}
	if got.Duplicated != 1 || !reflect.DeepEqual(got.DuplicatedSample, []int{1}) {
		t.Errorf("duplicated %d %v, want message 1 once", got.Duplicated, got.DuplicatedSample)
	}
	if got.OutOfOrderChats != 1 || got.Inversions != 1 || len(got.OutOfOrderSample) != 1 || !strings.HasPrefix(got.OutOfOrderSample[0], "chat 1: [2 1]") {
		t.Errorf("order: %d chats, %d inversions, %v", got.OutOfOrderChats, got.Inversions, got.OutOfOrderSample)
	}
	// The apology and the answer with a note added.
	if got.ErrorReplies != 2 || !strings.Contains(strings.Join(got.ErrorSample, "|"), "Redis") {
		t.Errorf("error replies %d %v", got.ErrorReplies, got.ErrorSample)
	}
	// Another message's reply token, a stranger, a message never acknowledged, another chat.
	if got.Unexpected != 4 {
		t.Errorf("unexpected %d %v", got.Unexpected, got.UnexpectedSample)
	}
	if got.Answered != 4 || got.OK() {
		t.Errorf("answered %d, ok %v", got.Answered, got.OK())
	}
}

func TestFailuresNameWhatWentWrong(t *testing.T) {
	r := &Result{Settled: true}
	if f := r.Failures(); len(f) != 0 || !r.OK() {
		t.Fatalf("clean result fails: %v", f)
	}
	r = &Result{Tally: Tally{Lost: 2, ErrorReplies: 1}, DeadLetters: []DeadLetter{{}}, Errors: []string{"sigterm chat-mio: still running"}}
	got := strings.Join(r.Failures(), "; ")
	for _, want := range []string{"2 lost", "1 error replies", "1 dead letters", "queues not settled", "still running"} {
		if !strings.Contains(got, want) {
			t.Errorf("failures %q lack %q", got, want)
		}
	}
	var md strings.Builder
	r.Markdown(&md)
	if !strings.Contains(md.String(), "**FAIL**") || !strings.Contains(md.String(), "| lost | 2 |") {
		t.Errorf("markdown:\n%s", md.String())
	}
}

func TestThroughProxyKeepsTheRestOfTheDSN(t *testing.T) {
	host, via, err := throughProxy("postgres://postgres@127.0.0.1:5432/test?sslmode=disable&search_path=bench_1")
	if err != nil || host != "127.0.0.1:5432" {
		t.Fatalf("host %q, %v", host, err)
	}
	if got := via("127.0.0.1:40001"); got != "postgres://postgres@127.0.0.1:40001/test?sslmode=disable&search_path=bench_1" {
		t.Fatalf("dsn %q", got)
	}
	if _, _, err := throughProxy("host=localhost dbname=test"); err == nil {
		t.Fatal("a keyword DSN passed")
	}
}

func TestCompareStreamIDs(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"1-0", "1-0", 0}, {"2-0", "10-0", -1}, {"5-3", "5-12", -1}, {"6-0", "5-99", 1}} {
		if got := compareIDs(c.a, c.b); got != c.want {
			t.Errorf("compareIDs(%s, %s) = %d", c.a, c.b, got)
		}
	}
}
