package domain

import (
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
)

// Limits of an approval card's parts (LINE caps a bubble's JSON at 30 KB; these keep a full
// card well below it, and the client trims further if it is still too big).
const (
	MaxFlexBytes     = 30 * 1000
	maxCardLine      = 200 // characters of one text line on the card
	maxCardDiffLines = 24  // changed lines on the card, over all files
	maxCardFacts     = 12
)

// Flex is an approval request as a LINE Flex bubble: title, risk, summary, the changed lines
// per file in a shaded box, facts, an optional console link and approve / deny buttons that
// carry the same postback data as the confirm template.
type Flex struct {
	AltText string
	Title   string
	// Risk is low, medium or high (the risk line's colour); RiskText the line itself.
	Risk, RiskText string
	Summary        []string
	Files          []chatlink.FileChange
	Facts          []string
	// Commands are the typed commands, shown small under the buttons.
	Commands     string
	ConsoleURL   string
	ConsoleLabel string
	Approve      Button
	Deny         Button
}

// NewFlex lays out card with the approve and deny buttons (buttons[0], buttons[1] of actions).
func NewFlex(card chatlink.ApprovalCard, actions []Action, buttons []Button, t Texts) *Flex {
	f := &Flex{
		Title: oneLine(card.Title), Risk: card.Risk, RiskText: oneLine(card.RiskText),
		Approve: buttons[0], Deny: buttons[1], ConsoleLabel: truncate(t.OpenConsole, MaxActionLabel),
	}
	if f.Title == "" {
		f.Title = card.JobID
	}
	for _, l := range card.Summary {
		f.Summary = append(f.Summary, oneLine(l))
	}
	budget := maxCardDiffLines
	for _, fc := range card.Files {
		c := chatlink.FileChange{Path: oneLine(fc.Path), Note: oneLine(fc.Note), More: truncate(fc.More, maxCardLine)}
		for _, l := range fc.Lines {
			if budget == 0 {
				break
			}
			c.Lines = append(c.Lines, diffLine(l))
			budget--
		}
		f.Files = append(f.Files, c)
	}
	for i, l := range card.Facts {
		if i == maxCardFacts {
			break
		}
		f.Facts = append(f.Facts, truncate(strings.TrimSpace(l), maxCardLine*3))
	}
	if u := card.ConsoleURL; u != "" && utf16Len(u) <= MaxURI && (strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://")) {
		f.ConsoleURL = u
	}
	cmds := make([]string, 0, len(actions))
	for _, a := range actions[:MaxConfirmActions] {
		cmds = append(cmds, Command(a))
	}
	f.Commands = strings.Join(cmds, "\n")
	alt := []string{f.Title}
	alt = append(alt, f.Summary...)
	if f.RiskText != "" {
		alt = append(alt, f.RiskText)
	}
	// The commands come last but are never cut: without buttons they are how one answers.
	f.AltText = truncate(strings.Join(alt, "\n"), MaxFlexAltText-utf16Len(f.Commands)-1) + "\n" + f.Commands
	return f
}

// Trim drops the card's last changed line (then its facts) to make it smaller; false when
// nothing is left to drop.
func (f *Flex) Trim() bool {
	for i := len(f.Files) - 1; i >= 0; i-- {
		if n := len(f.Files[i].Lines); n > 0 {
			f.Files[i].Lines = f.Files[i].Lines[:n-1]
			f.Files[i].More = "…"
			return true
		}
	}
	if n := len(f.Facts); n > 0 {
		f.Facts = f.Facts[:n-1]
		return true
	}
	if n := len(f.Files); n > 0 {
		f.Files = f.Files[:n-1]
		return true
	}
	return false
}

// oneLine is a single line of card text within its limit.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "\r", " ")), " ")
	return truncate(s, maxCardLine)
}

// diffLine is one changed line: its indentation kept (tabs as two spaces), on one line.
func diffLine(s string) string {
	s = strings.NewReplacer("\r", "", "\n", " ", "\t", "  ").Replace(s)
	return truncate(s, maxCardLine)
}
