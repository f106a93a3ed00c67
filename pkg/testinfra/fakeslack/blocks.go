package fakeslack

import (
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"
)

// Block Kit checks of posted blocks, per Slack's published block reference: known block and
// element types, required fields, text object types and the length limits.

func textLen(s string) int { return utf8.RuneCountInString(s) }

type blockChecker struct {
	problems  []string
	actionIDs map[string]bool
	blockIDs  map[string]bool
}

func (c *blockChecker) add(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// checkBlocks validates a message's blocks as posted and returns what breaks the rules.
func checkBlocks(raw string) []string {
	var blocks []map[string]any
	if err := json.Unmarshal([]byte(raw), &blocks); err != nil {
		return []string{"blocks: not an array of objects: " + err.Error()}
	}
	c := &blockChecker{actionIDs: map[string]bool{}, blockIDs: map[string]bool{}}
	if len(blocks) > 50 {
		c.add("%d blocks (max 50)", len(blocks))
	}
	for i, b := range blocks {
		c.block(fmt.Sprintf("blocks[%d]", i), b)
	}
	return c.problems
}

func (c *blockChecker) block(path string, b map[string]any) {
	if id, ok := b["block_id"].(string); ok {
		if id == "" || textLen(id) > 255 {
			c.add("%s.block_id: length %d (1..255)", path, textLen(id))
		}
		if c.blockIDs[id] {
			c.add("%s.block_id: %q repeated in one message", path, id)
		}
		c.blockIDs[id] = true
	}
	switch b["type"] {
	case "section":
		text, hasText := b["text"]
		fields, _ := b["fields"].([]any)
		if !hasText && len(fields) == 0 {
			c.add("%s: a section needs text or fields", path)
		}
		if hasText {
			c.text(path+".text", text, 3000, "")
		}
		if len(fields) > 10 {
			c.add("%s.fields: %d (max 10)", path, len(fields))
		}
		for j, f := range fields {
			c.text(fmt.Sprintf("%s.fields[%d]", path, j), f, 2000, "")
		}
		if a, ok := b["accessory"].(map[string]any); ok {
			c.element(path+".accessory", a)
		}
	case "header":
		c.text(path+".text", b["text"], 150, "plain_text")
	case "divider":
	case "context":
		els, _ := b["elements"].([]any)
		if len(els) == 0 || len(els) > 10 {
			c.add("%s.elements: %d (1..10)", path, len(els))
		}
		for j, e := range els {
			m, _ := e.(map[string]any)
			if m["type"] == "image" {
				c.image(fmt.Sprintf("%s.elements[%d]", path, j), m)
				continue
			}
			c.text(fmt.Sprintf("%s.elements[%d]", path, j), m, 3000, "")
		}
	case "actions":
		els, _ := b["elements"].([]any)
		if len(els) == 0 || len(els) > 25 {
			c.add("%s.elements: %d (1..25)", path, len(els))
		}
		for j, e := range els {
			m, _ := e.(map[string]any)
			c.element(fmt.Sprintf("%s.elements[%d]", path, j), m)
		}
	case "image":
		c.image(path, b)
	default:
		c.add("%s.type: %v is not a block type this fake knows", path, b["type"])
	}
}

func (c *blockChecker) text(path string, v any, max int, only string) {
	t, ok := v.(map[string]any)
	if !ok {
		c.add("%s: not a text object", path)
		return
	}
	typ, _ := t["type"].(string)
	if typ != "plain_text" && typ != "mrkdwn" {
		c.add("%s.type: %q (plain_text or mrkdwn)", path, typ)
	}
	if only != "" && typ != only {
		c.add("%s.type: %q, want %s", path, typ, only)
	}
	s, _ := t["text"].(string)
	if s == "" || textLen(s) > max {
		c.add("%s.text: length %d (1..%d)", path, textLen(s), max)
	}
	if _, ok := t["emoji"]; ok && typ == "mrkdwn" {
		c.add("%s.emoji: only for plain_text", path)
	}
	if _, ok := t["verbatim"]; ok && typ == "plain_text" {
		c.add("%s.verbatim: only for mrkdwn", path)
	}
}

func (c *blockChecker) element(path string, e map[string]any) {
	switch e["type"] {
	case "button":
		c.text(path+".text", e["text"], 75, "plain_text")
		id, _ := e["action_id"].(string)
		if id == "" || textLen(id) > 255 {
			c.add("%s.action_id: length %d (1..255)", path, textLen(id))
		}
		if c.actionIDs[id] {
			c.add("%s.action_id: %q repeated in one message", path, id)
		}
		c.actionIDs[id] = true
		if v, _ := e["value"].(string); textLen(v) > 2000 {
			c.add("%s.value: length %d (max 2000)", path, textLen(v))
		}
		if u, ok := e["url"].(string); ok && (u == "" || textLen(u) > 3000) {
			c.add("%s.url: length %d (1..3000)", path, textLen(u))
		}
		if st, ok := e["style"]; ok && !slices.Contains([]any{"primary", "danger"}, st) {
			c.add("%s.style: %v (primary or danger)", path, st)
		}
	case "image":
		c.image(path, e)
	default:
		c.add("%s.type: %v is not an element this fake knows", path, e["type"])
	}
}

func (c *blockChecker) image(path string, m map[string]any) {
	if alt, _ := m["alt_text"].(string); alt == "" || textLen(alt) > 2000 {
		c.add("%s.alt_text: length %d (1..2000)", path, textLen(alt))
	}
	if u, _ := m["image_url"].(string); u == "" && m["slack_file"] == nil {
		c.add("%s: image_url or slack_file required", path)
	}
}
