package fakeslack

import (
	"strings"
	"testing"
)

// TestBlockChecks: blocks that break Slack's block reference are reported; good ones are not.
func TestBlockChecks(t *testing.T) {
	good := `[{"type":"header","text":{"type":"plain_text","text":"Approval","emoji":true}},
		{"type":"section","text":{"type":"mrkdwn","text":"*x*","verbatim":true}},{"type":"divider"},
		{"type":"context","elements":[{"type":"mrkdwn","text":"facts"}]},
		{"type":"actions","block_id":"decision","elements":[{"type":"button","text":{"type":"plain_text","text":"OK"},"action_id":"approve","value":"job_1","style":"primary"}]}]`
	if p := checkBlocks(good); len(p) > 0 {
		t.Fatalf("good blocks: %v", p)
	}
	long := strings.Repeat("x", 3001)
	for name, tc := range map[string]struct{ blocks, want string }{
		"long section":       {`[{"type":"section","text":{"type":"mrkdwn","text":"` + long + `"}}]`, "length 3001"},
		"mrkdwn header":      {`[{"type":"header","text":{"type":"mrkdwn","text":"x"}}]`, "want plain_text"},
		"long header":        {`[{"type":"header","text":{"type":"plain_text","text":"` + strings.Repeat("h", 151) + `"}}]`, "(1..150)"},
		"empty section":      {`[{"type":"section"}]`, "text or fields"},
		"unknown block":      {`[{"type":"carousel"}]`, "not a block type"},
		"bad style":          {`[{"type":"actions","elements":[{"type":"button","text":{"type":"plain_text","text":"a"},"action_id":"a","style":"green"}]}]`, "primary or danger"},
		"repeated action id": {`[{"type":"actions","elements":[{"type":"button","text":{"type":"plain_text","text":"a"},"action_id":"a"},{"type":"button","text":{"type":"plain_text","text":"b"},"action_id":"a"}]}]`, "repeated"},
		"repeated block id":  {`[{"type":"divider","block_id":"d"},{"type":"divider","block_id":"d"}]`, "repeated"},
		"emoji on mrkdwn":    {`[{"type":"section","text":{"type":"mrkdwn","text":"x","emoji":true}}]`, "only for plain_text"},
		"too many blocks":    {"[" + strings.TrimSuffix(strings.Repeat(`{"type":"divider"},`, 51), ",") + "]", "51 blocks"},
	} {
		p := checkBlocks(tc.blocks)
		if !strings.Contains(strings.Join(p, "\n"), tc.want) {
			t.Errorf("%s: problems %v, want %q", name, p, tc.want)
		}
	}
}
