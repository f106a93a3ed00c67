package fakeline

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Checks of Flex and image messages against the Messaging API's definitions (FlexMessage,
// FlexBubble, FlexCarousel, FlexBox, FlexText, FlexButton, FlexSeparator, PostbackAction,
// URIAction, ImageMessage): required properties, enum values and size limits.

const (
	maxFlexAltText   = 1500
	maxBubbleBytes   = 30 * 1000
	maxCarouselBytes = 50 * 1000
	maxImageURL      = 2000
	maxURIAction     = 1000
)

var (
	flexSizes    = []string{"xxs", "xs", "sm", "md", "lg", "xl", "xxl", "3xl", "4xl", "5xl"}
	flexSpacings = []string{"none", "xs", "sm", "md", "lg", "xl", "xxl"}
	bubbleSizes  = []string{"nano", "micro", "deca", "hecto", "kilo", "mega", "giga"}
	pixels       = regexp.MustCompile(`^\d+(\.\d+)?px$`)
	percent      = regexp.MustCompile(`^\d+(\.\d+)?%$`)
	hexColor     = regexp.MustCompile(`^#([0-9a-fA-F]{6}|[0-9a-fA-F]{8})$`)
)

type flexChecker struct {
	s   *Server
	msg int
}

func (c flexChecker) problem(path, format string, args ...any) {
	c.s.problem("message %d: flex %s: %s", c.msg, path, fmt.Sprintf(format, args...))
}

// checkFlex validates a Flex message; s.mu is held.
func (s *Server) checkFlex(i int, m Message) {
	c := flexChecker{s: s, msg: i}
	if l := utf8.RuneCountInString(m.AltText); l == 0 || l > maxFlexAltText {
		c.problem("altText", "length %d (1..%d)", l, maxFlexAltText)
	}
	if len(m.Contents) == 0 {
		c.problem("contents", "missing")
		return
	}
	var container map[string]any
	if err := json.Unmarshal(m.Contents, &container); err != nil {
		c.problem("contents", "not an object: %v", err)
		return
	}
	switch container["type"] {
	case "bubble":
		if len(m.Contents) > maxBubbleBytes {
			c.problem("contents", "bubble of %d bytes (max %d)", len(m.Contents), maxBubbleBytes)
		}
		c.bubble("contents", container)
	case "carousel":
		if len(m.Contents) > maxCarouselBytes {
			c.problem("contents", "carousel of %d bytes (max %d)", len(m.Contents), maxCarouselBytes)
		}
		bs, _ := container["contents"].([]any)
		if len(bs) == 0 || len(bs) > 12 {
			c.problem("contents.contents", "%d bubbles (1..12)", len(bs))
		}
		for j, b := range bs {
			bm, _ := b.(map[string]any)
			if bm["type"] != "bubble" {
				c.problem(fmt.Sprintf("contents.contents[%d]", j), "type %v, want bubble", bm["type"])
				continue
			}
			c.bubble(fmt.Sprintf("contents.contents[%d]", j), bm)
		}
	default:
		c.problem("contents.type", "%v (bubble or carousel)", container["type"])
	}
}

func (c flexChecker) bubble(path string, b map[string]any) {
	c.enum(path+".size", b["size"], bubbleSizes...)
	c.enum(path+".direction", b["direction"], "ltr", "rtl")
	n := 0
	for _, part := range []string{"header", "body", "footer"} {
		v, ok := b[part]
		if !ok || v == nil {
			continue
		}
		n++
		box, _ := v.(map[string]any)
		if box["type"] != "box" {
			c.problem(path+"."+part, "type %v, want box", box["type"])
			continue
		}
		c.component(path+"."+part, box)
	}
	if hero, ok := b["hero"]; ok && hero != nil {
		n++
		c.component(path+".hero", hero.(map[string]any))
	}
	if n == 0 {
		c.problem(path, "a bubble needs a header, hero, body or footer")
	}
	if a, ok := b["action"]; ok && a != nil {
		c.action(path+".action", a)
	}
}

func (c flexChecker) component(path string, m map[string]any) {
	c.nonNegative(path+".flex", m["flex"])
	c.spacing(path+".margin", m["margin"])
	c.enum(path+".position", m["position"], "relative", "absolute")
	switch m["type"] {
	case "box":
		c.enum(path+".layout", m["layout"], "horizontal", "vertical", "baseline")
		if m["layout"] == nil {
			c.problem(path+".layout", "missing")
		}
		contents, ok := m["contents"].([]any)
		if !ok {
			c.problem(path+".contents", "missing")
		}
		c.spacing(path+".spacing", m["spacing"])
		c.spacing(path+".cornerRadius", m["cornerRadius"])
		for _, k := range []string{"paddingAll", "paddingTop", "paddingBottom", "paddingStart", "paddingEnd"} {
			c.length(path+"."+k, m[k])
		}
		for _, k := range []string{"backgroundColor", "borderColor"} {
			c.color(path+"."+k, m[k])
		}
		if a, ok := m["action"]; ok && a != nil {
			c.action(path+".action", a)
		}
		for j, v := range contents {
			cm, ok := v.(map[string]any)
			if !ok {
				c.problem(fmt.Sprintf("%s.contents[%d]", path, j), "not an object")
				continue
			}
			if m["layout"] == "baseline" && !slices.Contains([]any{"text", "icon", "filler", "span"}, cm["type"]) {
				c.problem(fmt.Sprintf("%s.contents[%d]", path, j), "%v in a baseline box", cm["type"])
			}
			c.component(fmt.Sprintf("%s.contents[%d]", path, j), cm)
		}
	case "text":
		text, _ := m["text"].(string)
		spans, _ := m["contents"].([]any)
		if text == "" && len(spans) == 0 {
			c.problem(path+".text", "missing (a text needs text or contents)")
		}
		c.size(path+".size", m["size"])
		c.enum(path+".weight", m["weight"], "regular", "bold")
		c.enum(path+".style", m["style"], "normal", "italic")
		c.enum(path+".decoration", m["decoration"], "none", "underline", "line-through")
		c.enum(path+".align", m["align"], "start", "end", "center")
		c.enum(path+".gravity", m["gravity"], "top", "bottom", "center")
		c.color(path+".color", m["color"])
		c.nonNegative(path+".maxLines", m["maxLines"])
		if a, ok := m["action"]; ok && a != nil {
			c.action(path+".action", a)
		}
	case "button":
		a, ok := m["action"]
		if !ok || a == nil {
			c.problem(path+".action", "missing")
		} else {
			c.action(path+".action", a)
		}
		c.enum(path+".style", m["style"], "primary", "secondary", "link")
		c.enum(path+".height", m["height"], "sm", "md")
		c.enum(path+".gravity", m["gravity"], "top", "bottom", "center")
		c.color(path+".color", m["color"])
	case "separator":
		c.color(path+".color", m["color"])
	case "filler", "spacer":
	case "image":
		u, _ := m["url"].(string)
		c.httpsURL(path+".url", u, maxImageURL)
	default:
		c.problem(path+".type", "%v is not a Flex component this fake knows", m["type"])
	}
}

func (c flexChecker) action(path string, v any) {
	a, _ := v.(map[string]any)
	label, _ := a["label"].(string)
	if l := utf8.RuneCountInString(label); l > 20 {
		c.problem(path+".label", "length %d (max 20)", l)
	}
	switch a["type"] {
	case "postback":
		data, _ := a["data"].(string)
		if len(data) == 0 || len(data) > 300 {
			c.problem(path+".data", "%d bytes (1..300)", len(data))
		}
		if dt, _ := a["displayText"].(string); utf8.RuneCountInString(dt) > 300 {
			c.problem(path+".displayText", "longer than 300 characters")
		}
		if a["displayText"] != nil && a["text"] != nil {
			c.problem(path, "displayText and text together")
		}
	case "uri":
		u, _ := a["uri"].(string)
		if utf8.RuneCountInString(u) == 0 || utf8.RuneCountInString(u) > maxURIAction {
			c.problem(path+".uri", "length %d (1..%d)", utf8.RuneCountInString(u), maxURIAction)
		}
		if p, err := url.Parse(u); err != nil || !slices.Contains([]string{"http", "https", "line", "tel"}, p.Scheme) {
			c.problem(path+".uri", "%q is not an http, https, line or tel URI", u)
		}
	case "message":
		if t, _ := a["text"].(string); t == "" || utf8.RuneCountInString(t) > 300 {
			c.problem(path+".text", "length %d (1..300)", utf8.RuneCountInString(t))
		}
	default:
		c.problem(path+".type", "action type %v", a["type"])
	}
}

func (c flexChecker) enum(path string, v any, allowed ...string) {
	if v == nil {
		return
	}
	s, ok := v.(string)
	if !ok || !slices.Contains(allowed, s) {
		c.problem(path, "%v is not one of %s", v, strings.Join(allowed, ", "))
	}
}

func (c flexChecker) size(path string, v any) {
	if s, ok := v.(string); ok && pixels.MatchString(s) {
		return
	}
	c.enum(path, v, flexSizes...)
}

func (c flexChecker) spacing(path string, v any) {
	if s, ok := v.(string); ok && pixels.MatchString(s) {
		return
	}
	c.enum(path, v, flexSpacings...)
}

func (c flexChecker) length(path string, v any) {
	if s, ok := v.(string); ok && (pixels.MatchString(s) || percent.MatchString(s)) {
		return
	}
	c.enum(path, v, flexSpacings...)
}

func (c flexChecker) color(path string, v any) {
	if v == nil {
		return
	}
	if s, ok := v.(string); !ok || !hexColor.MatchString(s) {
		c.problem(path, "%v is not a #RRGGBB(AA) colour", v)
	}
}

func (c flexChecker) nonNegative(path string, v any) {
	if v == nil {
		return
	}
	if f, ok := v.(float64); !ok || f < 0 || f != float64(int64(f)) {
		c.problem(path, "%v is not a non-negative integer", v)
	}
}

func (c flexChecker) httpsURL(path, u string, max int) {
	if utf8.RuneCountInString(u) > max {
		c.problem(path, "longer than %d characters", max)
	}
	if p, err := url.Parse(u); err != nil || p.Scheme != "https" || p.Host == "" {
		c.problem(path, "%q is not an HTTPS URL", u)
	}
}

// checkImage validates an image message; s.mu is held.
func (s *Server) checkImage(i int, m Message) {
	c := flexChecker{s: s, msg: i}
	if m.OriginalContentURL == "" || m.PreviewImageURL == "" {
		s.problem("message %d: image without originalContentUrl or previewImageUrl", i)
		return
	}
	c.httpsURL("originalContentUrl", m.OriginalContentURL, maxImageURL)
	c.httpsURL("previewImageUrl", m.PreviewImageURL, maxImageURL)
}

// flexPostbacks are the postback actions of a Flex message's buttons, in order.
func flexPostbacks(raw json.RawMessage) []Action {
	var out []Action
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			if t["type"] == "button" {
				if a, ok := t["action"].(map[string]any); ok && a["type"] == "postback" {
					act := Action{Type: "postback"}
					act.Label, _ = a["label"].(string)
					act.Data, _ = a["data"].(string)
					act.DisplayText, _ = a["displayText"].(string)
					out = append(out, act)
				}
			}
			for _, k := range []string{"header", "hero", "body", "footer", "contents"} {
				if x, ok := t[k]; ok {
					walk(x)
				}
			}
		case []any:
			for _, x := range t {
				walk(x)
			}
		}
	}
	var v any
	if json.Unmarshal(raw, &v) == nil {
		walk(v)
	}
	return out
}

// FlexURIs are the URIs of a Flex message's URI actions (console links), in order.
func (m Message) FlexURIs() []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			if a, ok := t["action"].(map[string]any); ok && a["type"] == "uri" {
				u, _ := a["uri"].(string)
				out = append(out, u)
			}
			for _, k := range []string{"header", "hero", "body", "footer", "contents"} {
				if x, ok := t[k]; ok {
					walk(x)
				}
			}
		case []any:
			for _, x := range t {
				walk(x)
			}
		}
	}
	var v any
	if json.Unmarshal(m.Contents, &v) == nil {
		walk(v)
	}
	return out
}
