package lineapi

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink/chatlinktest"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/domain"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestApprovalFlexGolden renders the approval cards as the Messaging API receives them.
func TestApprovalFlexGolden(t *testing.T) {
	for _, tc := range chatlinktest.ApprovalCards() {
		t.Run(tc.Name, func(t *testing.T) {
			texts := domain.TextsFor(tc.Reply.Approval.Locale)
			msgs := domain.Compose([]chatlink.Reply{tc.Reply}, texts, nil)
			if len(msgs) != 1 || msgs[0].Flex == nil {
				t.Fatalf("want one Flex message, got %+v", msgs)
			}
			got, err := json.MarshalIndent(map[string]any{"messages": toSDK(msgs)}, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if len(got) > domain.MaxFlexBytes*2 {
				t.Fatalf("message of %d bytes", len(got))
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
		})
	}
}

// TestFlexBubbleFitsLimit: a card far over LINE's 30 KB per bubble is cut down to fit.
func TestFlexBubbleFitsLimit(t *testing.T) {
	tc := chatlinktest.ApprovalCards()[3]
	card := *tc.Reply.Approval
	for range 60 {
		card.Files = append(card.Files, card.Files[0])
		card.Facts = append(card.Facts, "more: "+card.Facts[0])
	}
	f := domain.NewFlex(card, tc.Reply.Actions, []domain.Button{{Label: "a", Data: "a=approve&j=x"}, {Label: "d", Data: "a=deny&j=x"}}, domain.TextsFor("en"))
	raw, err := json.Marshal(toSDK([]domain.OutMessage{{Flex: f}})[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > domain.MaxFlexBytes {
		t.Fatalf("bubble of %d bytes", len(raw))
	}
}

// TestApprovalFlexAccepted: every golden card, pushed with this client, passes the fake's checks
// of the Messaging API definitions.
func TestApprovalFlexAccepted(t *testing.T) {
	line := fakeline.NewServer("tok")
	defer line.Close()
	c, err := New(Config{BaseURL: line.URL, Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range chatlinktest.ApprovalCards() {
		msgs := domain.Compose([]chatlink.Reply{tc.Reply}, domain.TextsFor(tc.Reply.Approval.Locale), nil)
		if err := c.Push(context.Background(), "U0123", msgs, ""); err != nil {
			t.Errorf("%s: %v (problems %v)", tc.Name, err, line.Problems())
		}
	}
	if p := line.Problems(); len(p) > 0 || len(line.Sent()) != len(chatlinktest.ApprovalCards()) {
		t.Fatalf("problems %v, %d sent", p, len(line.Sent()))
	}
}
