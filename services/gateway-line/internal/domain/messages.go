package domain

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
)

// LINE Messaging API limits.
const (
	MaxMessages       = 5    // messages per reply or push request
	MaxTextLen        = 5000 // characters per text message (counted in UTF-16 units, as LINE does)
	MaxPostbackData   = 300  // bytes of postback data
	MaxConfirmText    = 240  // characters of a confirm template's text
	MaxAltText        = 400  // characters of a template's alt text
	MaxQuickReplies   = 13   // quick reply buttons per message
	MaxActionLabel    = 20   // characters of a button label
	MaxConfirmActions = 2
	MaxFlexAltText    = 1500 // characters of a Flex message's alt text
	MaxURI            = 1000 // characters of a URI action's uri
	MaxDisplayText    = 300  // characters of a postback action's display text
)

// ActionKind is what a button does.
type ActionKind = chatlink.ActionKind

// Action is a button offered with a reply, or a button press.
type Action = chatlink.Action

// Reply is one message from chat-mio.
type Reply = chatlink.Reply

// Button is a postback button as LINE shows it.
type Button struct {
	Label string
	// Data is the postback data (≤ 300 bytes).
	Data string
	// DisplayText is what appears in the chat as the user's message when pressed: the typed
	// command, so the conversation reads the same with or without buttons.
	DisplayText string
}

// Confirm is a two-button confirm template.
type Confirm struct {
	Text    string
	AltText string
	Yes, No Button
}

// OutMessage is one LINE message: a text (optionally with quick reply buttons), a confirm
// template, an approval card (Flex) or an image.
type OutMessage struct {
	Text         string
	QuickReplies []Button
	Confirm      *Confirm
	Flex         *Flex
	Image        *ImageURLs
}

// ImageURLs are the HTTPS addresses LINE fetches an image message's picture from.
type ImageURLs struct {
	Original, Preview string
}

// Publisher makes an image reachable for LINE and returns its addresses; Compose names the
// image's artifact in text instead when there is no publisher or it fails.
type Publisher func(img chatlink.Image) (ImageURLs, error)

// EncodePostback builds the postback data of an action, or ok=false when it cannot fit in
// LINE's 300 bytes. The trace is dropped rather than the button when only the trace does not fit.
func EncodePostback(a Action) (string, bool) {
	v := url.Values{}
	v.Set("a", string(a.Kind))
	v.Set("j", a.JobID)
	if a.Value != "" {
		v.Set("v", a.Value)
	}
	if a.Trace != "" {
		v.Set("t", a.Trace)
		if data := v.Encode(); len(data) <= MaxPostbackData {
			return data, true
		}
		v.Del("t")
	}
	data := v.Encode()
	return data, len(data) <= MaxPostbackData
}

// DecodePostback parses postback data made by EncodePostback.
func DecodePostback(data string) (Action, error) {
	v, err := url.ParseQuery(data)
	if err != nil {
		return Action{}, fmt.Errorf("%w: postback data: %w", ErrInvalid, err)
	}
	a := Action{Kind: ActionKind(v.Get("a")), JobID: v.Get("j"), Value: v.Get("v"), Trace: v.Get("t")}
	switch a.Kind {
	case chatlink.ActionApprove, chatlink.ActionDeny, chatlink.ActionPick, chatlink.ActionApproveSimilar:
	default:
		return Action{}, fmt.Errorf("%w: postback action %q", ErrInvalid, a.Kind)
	}
	if a.JobID == "" {
		return Action{}, fmt.Errorf("%w: postback without job id", ErrInvalid)
	}
	return a, nil
}

// Command is the typed form of an action, shown as text and used as the button's display text.
func Command(a Action) string { return chatlink.Command(a) }

// Compose turns chat-mio's replies into at most five LINE messages: long texts are split at
// line breaks within 5,000 characters, an approval request with its card becomes a Flex
// message, other buttons a confirm template (one approve/deny pair) or quick reply buttons, and
// the typed commands are always in the text (a card's alt text). Images become image messages
// at the addresses pub gives them, or a line naming where the job keeps them. When everything does
// not fit, text at the end is dropped and the last text kept says so; buttons are never dropped.
func Compose(replies []Reply, t Texts, pub Publisher) []OutMessage {
	type item struct {
		msg     OutMessage
		buttons bool
	}
	var items []item
	for _, r := range replies {
		text := strings.TrimSpace(r.Text)
		buttons := buttonsFor(r.Actions, t)
		if len(buttons) > 0 {
			if hint := commandHint(text, r.Actions); hint != "" {
				text = strings.TrimSpace(text + "\n\n" + hint)
			}
		}
		card := r.Approval != nil && isApproveDenyPair(r.Actions) && len(buttons) == len(r.Actions) && r.Approval.JobID == r.Actions[0].JobID
		if card {
			// The card shows everything the text says; its alt text carries the typed commands.
			text = ""
		}
		var notes []string
		var images []ImageURLs
		for _, im := range r.Images {
			if pub == nil {
				notes = append(notes, fmt.Sprintf(t.ImageNotShown, im.Artifact))
				continue
			}
			u, err := pub(im)
			if err != nil {
				notes = append(notes, fmt.Sprintf(t.ImageNotShown, im.Artifact))
				continue
			}
			images = append(images, u)
		}
		if len(notes) > 0 {
			text = strings.TrimSpace(text + "\n\n" + strings.Join(notes, "\n"))
		}
		chunks := SplitText(text, MaxTextLen)
		for _, c := range chunks {
			items = append(items, item{msg: OutMessage{Text: c}})
		}
		for i := range images {
			items = append(items, item{buttons: true, msg: OutMessage{Image: &images[i]}})
		}
		switch {
		case len(buttons) == 0:
		case card:
			items = append(items, item{buttons: true, msg: OutMessage{Flex: NewFlex(*r.Approval, r.Actions, buttons, t), QuickReplies: buttons[2:]}})
		case isApproveDenyPair(r.Actions) && len(buttons) == len(r.Actions):
			// The confirm template holds approve/deny; "approve similar" rides on it as a quick
			// reply (LINE allows quick replies on any message).
			jobID := r.Actions[0].JobID
			prompt := truncate(fmt.Sprintf(t.ConfirmPrompt, jobID), MaxConfirmText)
			items = append(items, item{buttons: true, msg: OutMessage{Confirm: &Confirm{
				Text: prompt, AltText: truncate(prompt+" "+Command(r.Actions[0])+" / "+Command(r.Actions[1]), MaxAltText),
				Yes: buttons[0], No: buttons[1],
			}, QuickReplies: buttons[2:]}})
		case len(items) > 0 && !items[len(items)-1].buttons:
			items[len(items)-1].msg.QuickReplies = buttons
			items[len(items)-1].buttons = true
		default:
			items = append(items, item{buttons: true, msg: OutMessage{Text: truncate(t.ChooseButton, MaxTextLen), QuickReplies: buttons}})
		}
	}
	truncated := false
	for len(items) > MaxMessages {
		// Drop the last plain text chunk; messages with buttons stay.
		dropped := false
		for i := len(items) - 1; i >= 0; i-- {
			if !items[i].buttons {
				items = append(items[:i], items[i+1:]...)
				dropped, truncated = true, true
				break
			}
		}
		if !dropped {
			items = items[:MaxMessages]
			truncated = true
		}
	}
	if truncated {
		for i := len(items) - 1; i >= 0; i-- {
			if items[i].msg.Confirm == nil && items[i].msg.Flex == nil && items[i].msg.Image == nil {
				items[i].msg.Text = truncate(items[i].msg.Text, MaxTextLen-utf16Len(t.Truncated)-1) + "\n" + t.Truncated
				break
			}
		}
	}
	out := make([]OutMessage, len(items))
	for i, it := range items {
		out[i] = it.msg
	}
	return out
}

func buttonsFor(actions []Action, t Texts) []Button {
	var out []Button
	for _, a := range actions {
		data, ok := EncodePostback(a)
		if !ok || len(out) == MaxQuickReplies {
			continue
		}
		label := a.Label
		if label == "" {
			label = t.Label(a.Kind)
		}
		out = append(out, Button{Label: truncate(label, MaxActionLabel), Data: data, DisplayText: Command(a)})
	}
	return out
}

// isApproveDenyPair: approve and deny of one job, optionally followed by approve similar of it.
func isApproveDenyPair(actions []Action) bool {
	if len(actions) < MaxConfirmActions || len(actions) > MaxConfirmActions+1 {
		return false
	}
	if len(actions) == MaxConfirmActions+1 && (actions[2].Kind != chatlink.ActionApproveSimilar || actions[2].JobID != actions[0].JobID) {
		return false
	}
	return actions[0].Kind == chatlink.ActionApprove && actions[1].Kind == chatlink.ActionDeny && actions[0].JobID == actions[1].JobID
}

// commandHint lists the typed commands the text does not already mention.
func commandHint(text string, actions []Action) string {
	var missing []string
	for _, a := range actions {
		c := Command(a)
		if !strings.Contains(text, c) {
			missing = append(missing, c)
		}
	}
	return strings.Join(missing, "\n")
}

// SplitText cuts s into pieces of at most limit UTF-16 units, preferring line breaks and never
// splitting a character.
func SplitText(s string, limit int) []string { return chatlink.SplitText(s, limit, cutIndex) }

// cutIndex is the byte index of the longest prefix of s within limit UTF-16 units.
func cutIndex(s string, limit int) int {
	n := 0
	for i, r := range s {
		w := utf16.RuneLen(r)
		if w < 0 {
			w = 1
		}
		if n+w > limit {
			return i
		}
		n += w
	}
	return len(s)
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if w := utf16.RuneLen(r); w > 0 {
			n += w
		} else {
			n++
		}
	}
	return n
}

func truncate(s string, limit int) string {
	if utf16Len(s) <= limit {
		return s
	}
	cut := cutIndex(s, limit-1)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
