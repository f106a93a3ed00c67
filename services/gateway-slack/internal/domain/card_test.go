package domain

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
)

// TestCardLimits: however much a card holds, each part fits its block and model text cannot
// close a code block, mention anyone or build a link.
func TestCardLimits(t *testing.T) {
	var lines []string
	for range 80 {
		lines = append(lines, "+"+strings.Repeat("<!channel> ``` & ", 40))
	}
	var files []chatlink.FileChange
	for range 20 {
		files = append(files, chatlink.FileChange{Path: "a/<b>.go", Lines: lines, More: "… more"})
	}
	c := chatlink.ApprovalCard{JobID: "job_1", Title: strings.Repeat("t", 400), Summary: []string{strings.Repeat("<@U1> ", 900)},
		Files: files, Facts: []string{strings.Repeat("f", 4000)}, ConsoleURL: "https://x.example/ui/#/jobs/job_1?a=1&b=2"}
	card := NewCard(c, []Action{{Kind: chatlink.ActionApprove, JobID: "job_1"}, {Kind: chatlink.ActionDeny, JobID: "job_1"}}, TextsFor("en"))
	if n := utf8.RuneCountInString(card.Header); n > MaxHeaderText {
		t.Errorf("header of %d characters", n)
	}
	for _, part := range append([]string{card.Intro, card.Facts, card.Console}, card.Files...) {
		if n := utf8.RuneCountInString(part); n > MaxSectionText {
			t.Errorf("part of %d characters", n)
		}
		if strings.Contains(part, "<!") || strings.Contains(part, "<@") {
			t.Errorf("markup in %q", part[:80])
		}
	}
	if len(card.Files) != maxCardFiles {
		t.Errorf("%d files", len(card.Files))
	}
	for _, f := range card.Files {
		if strings.Count(f, "```") != 2 {
			t.Errorf("a line closed the code block: %d fences", strings.Count(f, "```"))
		}
	}
	if card.Console != "<https://x.example/ui/#/jobs/job_1?a=1&amp;b=2|Open in console>" {
		t.Errorf("console %q", card.Console)
	}
	c.ConsoleURL = "https://x.example/|<!channel>"
	if NewCard(c, nil, TextsFor("en")).Console != "" {
		t.Error("a URL that breaks out of the link was linked")
	}
}

// No run of backticks in a changed line closes the code block it is shown in.
func TestCodeLineKeepsTheFence(t *testing.T) {
	for _, l := range []string{"```", "````", "`````*bold* <!channel>", "``````````"} {
		if got := codeLine(l); strings.Contains(got, "```") || strings.Contains(got, "<!") {
			t.Errorf("codeLine(%q) = %q", l, got)
		}
	}
}
