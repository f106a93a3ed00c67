package fakeline

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestSentMessagesAsUsersSeeThem: the texts and postback buttons of a confirm template and of
// quick replies are read back from what the gateway sent.
func TestSentMessagesAsUsersSeeThem(t *testing.T) {
	s := NewServer("tok-0123456789")
	defer s.Close()
	s.IssueReplyToken("rt")
	body, _ := json.Marshal(map[string]any{"replyToken": "rt", "messages": []any{
		map[string]any{"type": "text", "text": "hello", "quickReply": map[string]any{"items": []any{
			map[string]any{"type": "action", "action": map[string]any{"type": "postback", "label": "Pick", "data": "a=pick&j=job_1", "displayText": "/pick job_1"}}}}},
		map[string]any{"type": "template", "altText": "Approve job_1?", "template": map[string]any{"type": "confirm", "text": "Approve?",
			"actions": []any{
				map[string]any{"type": "postback", "label": "Approve", "data": "a=approve&j=job_1", "displayText": "/approve job_1"},
				map[string]any{"type": "postback", "label": "Deny", "data": "a=deny&j=job_1", "displayText": "/deny job_1"}}}},
	}})
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/v2/bot/message/reply", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer tok-0123456789")
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	sent := s.Sent()
	if res.StatusCode != http.StatusOK || len(sent) != 1 || len(sent[0].Messages) != 2 || sent[0].At.IsZero() {
		t.Fatalf("status %d, sent %+v, problems %v", res.StatusCode, sent, s.Problems())
	}
	text, confirm := sent[0].Messages[0], sent[0].Messages[1]
	if got := text.Texts(); len(got) != 1 || got[0] != "hello" || len(text.Postbacks()) != 1 || text.Postbacks()[0].Data != "a=pick&j=job_1" {
		t.Errorf("text message: %v %v", got, text.Postbacks())
	}
	if got := confirm.Texts(); len(got) != 2 || got[0] != "Approve job_1?" || got[1] != "Approve?" || len(confirm.Postbacks()) != 2 {
		t.Errorf("confirm: %v %v", got, confirm.Postbacks())
	}
	if p := s.Problems(); len(p) > 0 {
		t.Errorf("problems %v", p)
	}
}

// TestOutage: during an outage pushes and replies fail as configured — a dropped connection, a
// 429 with Retry-After, a push accepted whose answer is lost (its retry then gets 409) — and the
// API answers again after it.
func TestOutage(t *testing.T) {
	s := NewServer("tok")
	defer s.Close()
	push := func(key string) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/v2/bot/message/push",
			strings.NewReader(`{"to":"U1","messages":[{"type":"text","text":"hi"}]}`))
		req.Header.Set("Authorization", "Bearer tok")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Line-Retry-Key", key)
		return http.DefaultClient.Do(req)
	}
	const key = "123e4567-e89b-12d3-a456-426614174000"
	s.Outage(3, Fault{Reset: true}, Fault{Status: http.StatusTooManyRequests}, Fault{Status: http.StatusInternalServerError, Accept: true})
	if res, err := push(key); err == nil {
		res.Body.Close()
		t.Fatal("a dropped connection answered")
	}
	for _, want := range []int{http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusConflict} {
		res, err := push(key)
		if err != nil || res.StatusCode != want {
			t.Fatalf("push: %v %v, want %d", res, err, want)
		}
		res.Body.Close()
	}
	if s.Failed() != 3 || len(s.Sent()) != 1 {
		t.Fatalf("failed %d, sent %+v", s.Failed(), s.Sent())
	}
}
