package fakeslack

import (
	"encoding/json"
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
