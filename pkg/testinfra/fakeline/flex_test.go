package fakeline

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func send(t *testing.T, s *Server, msgs ...any) int {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"to": "U1", "messages": msgs})
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/v2/bot/message/push", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

func bubble(body ...any) map[string]any {
	return map[string]any{"type": "bubble", "size": "giga",
		"body": map[string]any{"type": "box", "layout": "vertical", "spacing": "md", "contents": body},
		"footer": map[string]any{"type": "box", "layout": "horizontal", "contents": []any{
			map[string]any{"type": "button", "style": "primary", "height": "sm", "flex": 1,
				"action": map[string]any{"type": "postback", "label": "Approve", "data": "a=approve&j=job_1", "displayText": "/approve job_1"}},
			map[string]any{"type": "button", "style": "link",
				"action": map[string]any{"type": "uri", "label": "Console", "uri": "https://picoclaw.example/ui/#/jobs/job_1"}},
		}}}
}

// TestFlexChecks: a well-formed Flex message passes and its buttons read back; each broken
// rule of the Messaging API's definitions is reported.
func TestFlexChecks(t *testing.T) {
	good := map[string]any{"type": "flex", "altText": "Approve job_1? /approve job_1", "contents": bubble(
		map[string]any{"type": "text", "text": "hello", "size": "sm", "wrap": true, "color": "#333333", "maxLines": 0},
		map[string]any{"type": "box", "layout": "vertical", "backgroundColor": "#F4F4F4", "paddingAll": "8px", "cornerRadius": "md",
			"contents": []any{map[string]any{"type": "text", "text": "+x", "size": "xxs"}}},
	)}
	s := NewServer("tok")
	defer s.Close()
	if code := send(t, s, good); code != http.StatusOK {
		t.Fatalf("good message: %d", code)
	}
	if p := s.Problems(); len(p) > 0 {
		t.Fatalf("problems with a good message: %v", p)
	}
	m := s.Sent()[0].Messages[0]
	if pb := m.Postbacks(); len(pb) != 1 || pb[0].Data != "a=approve&j=job_1" || pb[0].DisplayText != "/approve job_1" {
		t.Errorf("postbacks %+v", pb)
	}
	if u := m.FlexURIs(); len(u) != 1 || !strings.HasSuffix(u[0], "job_1") {
		t.Errorf("uris %v", u)
	}

	for name, tc := range map[string]struct {
		msg  map[string]any
		want string
	}{
		"no alt text":   {map[string]any{"type": "flex", "contents": bubble(map[string]any{"type": "text", "text": "x"})}, "altText"},
		"long alt text": {map[string]any{"type": "flex", "altText": strings.Repeat("a", 1501), "contents": bubble(map[string]any{"type": "text", "text": "x"})}, "altText"},
		"bad size":      {map[string]any{"type": "flex", "altText": "a", "contents": bubble(map[string]any{"type": "text", "text": "x", "size": "huge"})}, "size"},
		"no layout":     {map[string]any{"type": "flex", "altText": "a", "contents": bubble(map[string]any{"type": "box", "contents": []any{}})}, "layout"},
		"empty text":    {map[string]any{"type": "flex", "altText": "a", "contents": bubble(map[string]any{"type": "text"})}, "text"},
		"bad colour":    {map[string]any{"type": "flex", "altText": "a", "contents": bubble(map[string]any{"type": "text", "text": "x", "color": "red"})}, "colour"},
		"bad container": {map[string]any{"type": "flex", "altText": "a", "contents": map[string]any{"type": "box"}}, "bubble or carousel"},
		"too big": {map[string]any{"type": "flex", "altText": "a", "contents": bubble(
			map[string]any{"type": "text", "text": strings.Repeat("x", 31000)})}, "bytes"},
		"long postback": {map[string]any{"type": "flex", "altText": "a", "contents": map[string]any{"type": "bubble", "body": map[string]any{
			"type": "box", "layout": "vertical", "contents": []any{map[string]any{"type": "button",
				"action": map[string]any{"type": "postback", "label": "L", "data": strings.Repeat("d", 301)}}}}}}, "data"},
		"button without action": {map[string]any{"type": "flex", "altText": "a", "contents": map[string]any{"type": "bubble", "body": map[string]any{
			"type": "box", "layout": "vertical", "contents": []any{map[string]any{"type": "button"}}}}}, "action"},
		"image over http":       {map[string]any{"type": "image", "originalContentUrl": "http://x.example/a.png", "previewImageUrl": "https://x.example/a.png"}, "HTTPS"},
		"image without preview": {map[string]any{"type": "image", "originalContentUrl": "https://x.example/a.png"}, "previewImageUrl"},
	} {
		t.Run(name, func(t *testing.T) {
			s := NewServer("tok")
			defer s.Close()
			if code := send(t, s, tc.msg); code != http.StatusBadRequest || len(s.Sent()) != 0 {
				t.Errorf("status %d, %d sent: want 400 and nothing sent", code, len(s.Sent()))
			}
			p := s.Problems()
			if len(p) == 0 || !strings.Contains(strings.Join(p, "\n"), tc.want) {
				t.Errorf("problems %v, want one about %q", p, tc.want)
			}
		})
	}
}
