package domain

import (
	"strings"
	"unicode/utf8"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
)

// Block Kit limits the approval card keeps to.
const (
	MaxBlocks      = 50
	MaxHeaderText  = 150  // characters of a header block's plain text
	MaxSectionText = 3000 // characters of a section's text
	maxCardFiles   = 8
	maxCardFacts   = 12
	// MaxFallbackText keeps the message's text (notifications, clients without blocks) within a
	// section's limit: once decided, the card is replaced by a section holding this text.
	MaxFallbackText = MaxSectionText
)

// Card is an approval request as Block Kit content: every string escaped for mrkdwn (or plain
// text for the header), cut to its block's limit.
type Card struct {
	// Header is plain text (a header block shows no markup, so it is not escaped).
	Header string
	// Risk is low, medium or high; Intro the risk line and summary (mrkdwn).
	Risk  string
	Intro string
	// Files are one section each: the path line and the changed lines in a code block.
	Files []string
	// Facts is one section (mrkdwn).
	Facts string
	// Console is a mrkdwn link to the job in the console ("" without one).
	Console string
	// Commands are the typed commands (mrkdwn), shown under the buttons.
	Commands string
}

// NewCard lays out c (strings as approval wrote them: model text defused, not escaped).
func NewCard(c chatlink.ApprovalCard, buttons []Action, t Texts) *Card {
	card := &Card{Header: cut(oneLine(c.Title), MaxHeaderText), Risk: c.Risk}
	if card.Header == "" {
		card.Header = c.JobID
	}
	var intro []string
	if c.RiskText != "" {
		intro = append(intro, "*"+Escape(oneLine(c.RiskText))+"*")
	}
	for _, l := range c.Summary {
		intro = append(intro, Escape(oneLine(l)))
	}
	card.Intro = cut(strings.Join(intro, "\n"), MaxSectionText)
	for i, f := range c.Files {
		if i == maxCardFiles {
			break
		}
		head := "*" + Escape(oneLine(f.Path)) + "*"
		if f.Note != "" {
			head += "  " + Escape(oneLine(f.Note))
		}
		var tail string
		if f.More != "" {
			tail = "\n_" + Escape(oneLine(f.More)) + "_"
		}
		body := ""
		if len(f.Lines) > 0 {
			// Lines go in while the section stays within its limit (the fence and the head
			// counted); what does not fit is marked.
			budget := MaxSectionText - utf8.RuneCountInString(head) - utf8.RuneCountInString(tail) - 20
			var lines []string
			used := 0
			for j, l := range f.Lines {
				e := codeLine(l)
				if used+utf8.RuneCountInString(e)+1 > budget {
					if tail == "" {
						tail = "\n_… (+" + itoa(len(f.Lines)-j) + ")_"
					}
					break
				}
				lines = append(lines, e)
				used += utf8.RuneCountInString(e) + 1
			}
			if len(lines) > 0 {
				body = "\n```\n" + strings.Join(lines, "\n") + "\n```"
			}
		}
		card.Files = append(card.Files, head+body+tail)
	}
	var facts []string
	for i, f := range c.Facts {
		if i == maxCardFacts {
			break
		}
		facts = append(facts, Escape(strings.TrimSpace(f)))
	}
	card.Facts = cut(strings.Join(facts, "\n"), MaxSectionText)
	if u := c.ConsoleURL; safeURL(u) {
		card.Console = "<" + strings.ReplaceAll(u, "&", "&amp;") + "|" + Escape(t.OpenConsole) + ">"
	}
	var cmds []string
	for _, a := range buttons {
		if a.Kind == chatlink.ActionApprove || a.Kind == chatlink.ActionDeny {
			cmds = append(cmds, "`"+Escape(Command(a))+"`")
		}
	}
	card.Commands = strings.Join(cmds, "  ")
	return card
}

// codeLine is one changed line for a code block: escaped, on one line, and unable to close the
// fence.
func codeLine(s string) string {
	s = strings.NewReplacer("\r", "", "\n", " ", "\t", "  ").Replace(s)
	// Each pass breaks the runs of three it sees; a longer run leaves three behind until the
	// next pass.
	for strings.Contains(s, "```") {
		s = strings.ReplaceAll(s, "```", "`\u200b``")
	}
	return cut(Escape(s), 300)
}

// safeURL: an http(s) address that cannot break out of a mrkdwn link.
func safeURL(u string) bool {
	return (strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://")) && utf8.RuneCountInString(u) <= 3000 &&
		!strings.ContainsAny(u, "<>| \t\r\n")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func cut(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	return s[:chatlink.RuneFit(s, limit-1)] + "…"
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for ; n > 0; n /= 10 {
		i--
		b[i] = byte('0' + n%10)
	}
	return string(b[i:])
}
