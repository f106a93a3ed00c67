package domain

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
)

// Slack limits the gateway keeps to.
const (
	// MaxTextLen keeps one message within a section block's 3,000 characters.
	MaxTextLen = 3000
	// MaxButtons per actions block.
	MaxButtons = 25
	// MaxButtonValue is the button value limit in characters.
	MaxButtonValue = 2000
	splitLen       = 2500
	// MaxMessages bounds the messages one answer posts; the rest is cut with a note.
	MaxMessages = 10
)

// OutMessage is one thread message: text, and buttons under it; or an approval card (its
// text the fallback); or a picture to upload (its text the caption).
type OutMessage struct {
	Text    string
	Buttons []Action
	Card    *Card
	Image   *chatlink.Image
}

// Escape shows text as data: &, < and > are escaped so model output cannot mention people,
// @channel or build links.
func Escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// Compose turns chat-mio's replies into thread messages: text escaped and split, buttons on the
// last part with the typed commands in the text.
func Compose(replies []Reply, t Texts) []OutMessage {
	var out []OutMessage
	for _, r := range replies {
		text := strings.TrimSpace(r.Text)
		var buttons []Action
		for _, a := range r.Actions {
			if utf8.RuneCountInString(ButtonValue(a)) > MaxButtonValue {
				// The trace goes before the button does.
				a.Trace = ""
			}
			if len(buttons) < MaxButtons && utf8.RuneCountInString(ButtonValue(a)) <= MaxButtonValue {
				buttons = append(buttons, a)
			}
		}
		if len(buttons) > 0 {
			var missing []string
			for _, a := range buttons {
				if c := Command(a); !strings.Contains(text, c) {
					missing = append(missing, c)
				}
			}
			if len(missing) > 0 {
				text = strings.TrimSpace(text + "\n\n" + strings.Join(missing, "\n"))
			}
		}
		if r.Approval != nil && hasDecision(buttons, r.Approval.JobID) {
			// The card holds the request; the text is the fallback notifications show.
			out = append(out, OutMessage{Text: truncate(Escape(text), MaxFallbackText), Buttons: buttons,
				Card: NewCard(*r.Approval, buttons, t)})
			out = appendImages(out, r.Images)
			continue
		}
		// Split before escaping so no entity is cut; the margin absorbs what escaping adds.
		var parts []string
		for _, p := range SplitText(text, splitLen) {
			parts = append(parts, Escape(p))
		}
		if len(parts) == 0 && len(buttons) > 0 {
			parts = []string{t.ChooseButton}
		}
		for i, p := range parts {
			m := OutMessage{Text: p}
			if i == len(parts)-1 {
				m.Buttons = buttons
			}
			out = append(out, m)
		}
		out = appendImages(out, r.Images)
	}
	if len(out) > MaxMessages {
		last := out[len(out)-1]
		out = out[:MaxMessages]
		if len(last.Buttons) > 0 || last.Image != nil {
			out[MaxMessages-1] = last
		} else {
			out[MaxMessages-1].Text = truncate(out[MaxMessages-1].Text, MaxTextLen-utf8.RuneCountInString(t.Truncated)-1) + "\n" + t.Truncated
		}
	}
	return out
}

// hasDecision: the buttons approve and deny job.
func hasDecision(buttons []Action, job string) bool {
	var approve, deny bool
	for _, a := range buttons {
		approve = approve || (a.Kind == chatlink.ActionApprove && a.JobID == job)
		deny = deny || (a.Kind == chatlink.ActionDeny && a.JobID == job)
	}
	return approve && deny
}

// appendImages adds one upload per image, its caption escaped.
func appendImages(out []OutMessage, imgs []chatlink.Image) []OutMessage {
	for i := range imgs {
		out = append(out, OutMessage{Text: Escape(cut(oneLine(imgs[i].Caption), 200)), Image: &imgs[i]})
	}
	return out
}

// SplitText cuts s into pieces of at most limit characters, preferring line breaks.
func SplitText(s string, limit int) []string { return chatlink.SplitText(s, limit, chatlink.RuneFit) }

func truncate(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	return s[:chatlink.RuneFit(s, limit-1)] + "…"
}

// Texts are the user-facing strings in one locale: the runtime's, and the note that replaces
// decided buttons.
type Texts struct {
	chatlink.Texts
	Decided string // %s = who (a Slack mention), %s = the decision label
}

// DecidedNote is the line that replaces the buttons once someone pressed one.
func (t Texts) DecidedNote(user string, a Action) string {
	label := t.Label(a.Kind)
	if a.Kind == chatlink.ActionPick && a.Value != "" {
		label += " " + a.Value
	}
	return fmt.Sprintf(t.Decided, "<@"+user+">", label)
}

// TextsFor returns the texts of locale (ja by default, en for "en").
func TextsFor(locale string) Texts {
	if locale == "en" {
		return Texts{Texts: chatlink.TextsFor(locale), Decided: "%s chose: %s"}
	}
	return Texts{Texts: chatlink.TextsFor(locale), Decided: "%s が選択しました: %s"}
}
