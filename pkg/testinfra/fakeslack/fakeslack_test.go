package fakeslack

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestPostAsUsersSeeIt: the texts of sections and context elements and the buttons of actions
// blocks are read back from a post.
func TestPostAsUsersSeeIt(t *testing.T) {
	var blocks []Block
	raw := `[{"type":"section","text":{"type":"mrkdwn","text":"Approve job_1?"}},
		{"type":"actions","elements":[{"type":"button","action_id":"approve","value":"job_1","text":{"type":"plain_text","text":"Approve"}},
			{"type":"button","action_id":"deny","value":"job_1","text":{"type":"plain_text","text":"Deny"}}]},
		{"type":"context","elements":[{"type":"mrkdwn","text":"<@U1> chose: Approve"}]}]`
	if err := json.Unmarshal([]byte(raw), &blocks); err != nil {
		t.Fatal(err)
	}
	p := Post{Text: "fallback", Blocks: blocks}
	if got := p.Texts(); len(got) != 3 || got[0] != "fallback" || got[1] != "Approve job_1?" || got[2] != "<@U1> chose: Approve" {
		t.Errorf("texts %q", got)
	}
	if got := p.Buttons(); len(got) != 2 || got[0] != (Button{ActionID: "approve", Value: "job_1"}) || got[1].ActionID != "deny" {
		t.Errorf("buttons %+v", got)
	}
}

// TestOutageAndLookup: during an outage calls fail as configured — a dropped connection, a 429
// with Retry-After, a post made whose answer is lost — and a post's metadata is found again with
// conversations.replies only when include_all_metadata asks for it.
func TestOutageAndLookup(t *testing.T) {
	s := NewServer("xoxb-token")
	defer s.Close()
	post := func(text string) (*http.Response, error) {
		form := url.Values{"channel": {"C1"}, "thread_ts": {"1.0"}, "text": {text},
			"metadata": {`{"event_type":"picoclaw_send","event_payload":{"key":"k-` + text + `"}}`}}
		req, _ := http.NewRequest(http.MethodPost, s.APIURL()+"/chat.postMessage", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Authorization", "Bearer xoxb-token")
		return http.DefaultClient.Do(req)
	}
	s.Outage(3, Fault{Reset: true}, Fault{Status: http.StatusTooManyRequests}, Fault{Status: http.StatusServiceUnavailable, Accept: true})
	if res, err := post("a"); err == nil {
		res.Body.Close()
		t.Fatal("a dropped connection answered")
	}
	res, err := post("b")
	if err != nil || res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") != "1" {
		t.Fatalf("429: %v %v", res, err)
	}
	res.Body.Close()
	res, err = post("c")
	if err != nil || res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("lost answer: %v %v", res, err)
	}
	res.Body.Close()
	if res, err = post("d"); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("after the outage: %v %v", res, err)
	}
	res.Body.Close()
	if s.Failed() != 3 || len(s.Posts()) != 2 || s.Posts()[0].Text != "c" || s.Posts()[0].Metadata.EventPayload["key"] != "k-c" {
		t.Fatalf("failed %d, posts %+v", s.Failed(), s.Posts())
	}
	replies := func(meta string) []map[string]any {
		res, err := http.Get(s.APIURL() + "/conversations.replies?token=xoxb-token&channel=C1&ts=1.0&include_all_metadata=" + meta)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out struct {
			OK       bool             `json:"ok"`
			Messages []map[string]any `json:"messages"`
		}
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil || !out.OK {
			t.Fatalf("replies: %v %+v", err, out)
		}
		return out.Messages
	}
	if got := replies("true"); len(got) != 2 || got[0]["metadata"] == nil || got[0]["text"] != "c" {
		t.Fatalf("replies with metadata %+v", got)
	}
	if got := replies("0"); len(got) != 2 || got[0]["metadata"] != nil {
		t.Fatalf("replies without metadata %+v", got)
	}
}
