package slackapi

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink/chatlinktest"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeslack"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/internal/domain"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestApprovalBlocksGolden renders the approval cards as chat.postMessage receives them.
func TestApprovalBlocksGolden(t *testing.T) {
	for _, tc := range chatlinktest.ApprovalCards() {
		t.Run(tc.Name, func(t *testing.T) {
			texts := domain.TextsFor(tc.Reply.Approval.Locale)
			msgs := domain.Compose([]chatlink.Reply{tc.Reply}, texts)
			if len(msgs) != 1 || msgs[0].Card == nil {
				t.Fatalf("want one card, got %+v", msgs)
			}
			blocks := CardBlocks(msgs[0], texts)
			got, err := json.MarshalIndent(map[string]any{"text": msgs[0].Text, "blocks": slack.Blocks{BlockSet: blocks}}, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", tc.Name+".golden")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the golden file (run with -update after checking):\n%s", path, got)
			}
			// Model text never reaches Slack as markup: no raw <, > or & outside the entities
			// and the console link.
			for _, b := range blocks {
				raw, _ := json.Marshal(b)
				s := strings.ReplaceAll(string(raw), `\u003c`, "<")
				s = strings.ReplaceAll(s, `\u003e`, ">")
				if strings.Contains(s, "<!") || strings.Contains(s, "<https://evil") {
					t.Errorf("unescaped markup in %s", s)
				}
			}
		})
	}
}

// TestApprovalBlocksAccepted: every golden card, posted with this client, passes the fake's
// checks of Slack's block reference.
func TestApprovalBlocksAccepted(t *testing.T) {
	api := fakeslack.NewServer("xoxb-test")
	defer api.Close()
	c, err := New(Config{BaseURL: api.APIURL(), Token: "xoxb-test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range chatlinktest.ApprovalCards() {
		msgs := domain.Compose([]chatlink.Reply{tc.Reply}, domain.TextsFor(tc.Reply.Approval.Locale))
		if _, err := c.Post(context.Background(), "C1", "1.000", msgs[0], "k-"+tc.Name); err != nil {
			t.Errorf("%s: %v", tc.Name, err)
		}
	}
	if p := api.Problems(); len(p) > 0 || len(api.Posts()) != len(chatlinktest.ApprovalCards()) {
		t.Fatalf("problems %v, %d posted", p, len(api.Posts()))
	}
}
