package lineapi

import (
	"encoding/json"
	"slices"

	"github.com/line/line-bot-sdk-go/v8/linebot/messaging_api"

	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/domain"
)

var riskColor = map[string]string{"high": "#C62828", "medium": "#E65100", "low": "#2E7D32"}

// FlexBubble is the approval card as a Flex bubble within LINE's 30 KB per bubble: changed
// lines are dropped from the end (and marked) until it fits.
func FlexBubble(f *domain.Flex) *messaging_api.FlexBubble {
	c := *f
	c.Files, c.Facts = slices.Clone(f.Files), slices.Clone(f.Facts)
	for {
		b := bubble(&c)
		raw, err := json.Marshal(&messaging_api.FlexMessage{AltText: c.AltText, Contents: b})
		if err == nil && len(raw) <= domain.MaxFlexBytes {
			return b
		}
		if !c.Trim() {
			return b
		}
	}
}

func bubble(f *domain.Flex) *messaging_api.FlexBubble {
	text := func(s, size string, bold bool, color string) *messaging_api.FlexText {
		t := &messaging_api.FlexText{Text: s, Size: size, Wrap: true, Color: color}
		if bold {
			t.Weight = messaging_api.FlexTextWEIGHT_BOLD
		}
		return t
	}
	header := &messaging_api.FlexBox{Layout: messaging_api.FlexBoxLAYOUT_VERTICAL, Spacing: "sm",
		Contents: []messaging_api.FlexComponentInterface{text(f.Title, "md", true, "")}}
	if f.RiskText != "" {
		header.Contents = append(header.Contents, text(f.RiskText, "sm", true, riskColor[f.Risk]))
	}
	body := &messaging_api.FlexBox{Layout: messaging_api.FlexBoxLAYOUT_VERTICAL, Spacing: "md"}
	for _, l := range f.Summary {
		body.Contents = append(body.Contents, text(l, "sm", false, ""))
	}
	for _, fc := range f.Files {
		box := &messaging_api.FlexBox{Layout: messaging_api.FlexBoxLAYOUT_VERTICAL, BackgroundColor: "#F4F4F4",
			CornerRadius: "md", PaddingAll: "8px", Spacing: "none",
			Contents: []messaging_api.FlexComponentInterface{text(fc.Path, "xs", true, "")}}
		if fc.Note != "" {
			box.Contents = append(box.Contents, text(fc.Note, "xxs", false, "#6D4C41"))
		}
		for _, l := range fc.Lines {
			color := "#333333"
			switch {
			case len(l) > 0 && l[0] == '+':
				color = "#1B5E20"
			case len(l) > 0 && l[0] == '-':
				color = "#B71C1C"
			}
			box.Contents = append(box.Contents, text(l, "xxs", false, color))
		}
		if fc.More != "" {
			box.Contents = append(box.Contents, text(fc.More, "xxs", false, "#888888"))
		}
		body.Contents = append(body.Contents, box)
	}
	for _, l := range f.Facts {
		body.Contents = append(body.Contents, text(l, "xs", false, "#555555"))
	}
	if len(body.Contents) == 0 {
		body.Contents = append(body.Contents, text(f.Commands, "xs", false, ""))
	}
	buttons := &messaging_api.FlexBox{Layout: messaging_api.FlexBoxLAYOUT_HORIZONTAL, Spacing: "sm",
		Contents: []messaging_api.FlexComponentInterface{
			&messaging_api.FlexButton{Flex: 1, Style: messaging_api.FlexButtonSTYLE_PRIMARY, Height: messaging_api.FlexButtonHEIGHT_SM, Action: postback(f.Approve)},
			&messaging_api.FlexButton{Flex: 1, Style: messaging_api.FlexButtonSTYLE_SECONDARY, Height: messaging_api.FlexButtonHEIGHT_SM, Action: postback(f.Deny)},
		}}
	footer := &messaging_api.FlexBox{Layout: messaging_api.FlexBoxLAYOUT_VERTICAL, Spacing: "sm",
		Contents: []messaging_api.FlexComponentInterface{buttons}}
	if f.ConsoleURL != "" {
		footer.Contents = append(footer.Contents, &messaging_api.FlexButton{Style: messaging_api.FlexButtonSTYLE_LINK,
			Height: messaging_api.FlexButtonHEIGHT_SM, Action: &messaging_api.UriAction{Label: f.ConsoleLabel, Uri: f.ConsoleURL}})
	}
	footer.Contents = append(footer.Contents, text(f.Commands, "xxs", false, "#888888"))
	return &messaging_api.FlexBubble{Size: messaging_api.FlexBubbleSIZE_GIGA, Header: header, Body: body, Footer: footer}
}
