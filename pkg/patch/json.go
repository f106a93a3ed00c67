package patch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// parseJSON parses a JSON array of commands {type, action, target, content, metadata}.
// prefix is prepended to sources when the array sits inside a Markdown fence.
func parseJSON(text, prefix string) ([]raw, error) {
	where := strings.TrimSpace(prefix + " patch")
	if strings.HasPrefix(text, "{") {
		return nil, errorf(where, "", "a JSON patch must be an array of commands, got an object")
	}
	var items []json.RawMessage
	if err := json.Unmarshal([]byte(text), &items); err != nil {
		return nil, errorf(where, "", "invalid JSON: %v", err)
	}
	out := make([]raw, 0, len(items))
	for i, item := range items {
		src := fmt.Sprintf("command %d", i+1)
		if prefix != "" {
			src = prefix + " " + src
		}
		r, err := decodeCommand(item, src)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func decodeCommand(item json.RawMessage, src string) (raw, error) {
	trimmed := bytes.TrimSpace(item)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return raw{}, errorf(src, "", "must be an object {type, action, target, content, metadata}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(item, &fields); err != nil {
		return raw{}, errorf(src, "", "invalid JSON: %v", err)
	}
	r := raw{Source: src}
	str := func(name string, dst *string) error {
		v, ok := fields[name]
		if !ok || string(v) == "null" {
			return nil
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return errorf(src, name, "must be a string")
		}
		return nil
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"type", &r.Type}, {"action", &r.Action}, {"target", &r.Target}, {"content", &r.Content}} {
		if err := str(f.name, f.dst); err != nil {
			return raw{}, err
		}
	}
	if v, ok := fields["metadata"]; ok && string(v) != "null" {
		var md map[string]any
		if err := json.Unmarshal(v, &md); err != nil {
			return raw{}, errorf(src, "metadata", "must be an object of strings")
		}
		r.Metadata = make(map[string]string, len(md))
		for k, val := range md {
			switch x := val.(type) {
			case string:
				r.Metadata[k] = x
			case bool, float64:
				// Scalars are kept in their JSON spelling so the hash stays deterministic.
				b, _ := json.Marshal(x)
				r.Metadata[k] = string(b)
			default:
				return raw{}, errorf(src, "metadata."+k, "must be a string, number or boolean")
			}
		}
	}
	return r, nil
}
