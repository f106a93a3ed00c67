package config

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/picoclaw-suite/picoclaw/pkg/redact"
)

// Effective renders configurations (after their defaults, the file and the environment) as one
// YAML document in the file's shape: every key of every configuration, the keys they share
// (the common ones) once. Secrets never appear: a key kept out of the file is listed in a
// comment above its section with *** when set, and string values pass through redact.Secrets
// (a password inside a URL is masked too). The output decodes again as a config file.
func Effective(configs ...any) ([]byte, error) {
	root := &yaml.Node{Kind: yaml.MappingNode}
	var topSecrets []string
	for _, c := range configs {
		v := reflect.ValueOf(c)
		for v.Kind() == reflect.Pointer {
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			return nil, fmt.Errorf("config: Effective needs structs, got %T", c)
		}
		n, secrets, err := structNode(v)
		if err != nil {
			return nil, err
		}
		mergeMapping(root, n)
		topSecrets = appendNew(topSecrets, secrets...)
	}
	if len(topSecrets) > 0 {
		root.HeadComment = secretsComment(topSecrets)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// structNode is v's mapping; secrets are its keys kept out of the file ("name=*** (ENV)").
func structNode(v reflect.Value) (*yaml.Node, []string, error) {
	m := &yaml.Node{Kind: yaml.MappingNode}
	var secrets []string
	for _, f := range structFields(v.Type()) {
		fv := v.FieldByIndex(f.index)
		switch {
		case f.env != "" && f.claim == nil:
			state := "not set"
			if !fv.IsZero() {
				state = redact.Mask
			}
			secrets = append(secrets, fmt.Sprintf("%s=%s (%s)", f.name, state, f.env))
		case f.claim != nil:
			n, err := valueNode(fv)
			if err != nil {
				return nil, nil, err
			}
			// Build the path down to the claimed key and merge it in like any other key.
			for i := len(f.claim) - 1; i >= 0; i-- {
				n = &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{keyNode(f.claim[i]), n}}
			}
			mergeMapping(m, n)
		default:
			if fv.Kind() == reflect.Pointer && fv.IsNil() {
				continue
			}
			n, err := valueNode(fv)
			if err != nil {
				return nil, nil, err
			}
			mergeMapping(m, &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{keyNode(f.name), n}})
		}
	}
	return m, secrets, nil
}

func valueNode(v reflect.Value) (*yaml.Node, error) {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
		}
		v = v.Elem()
	}
	t := v.Type()
	switch {
	case !decodedByYAML(t) && t.Kind() == reflect.Struct:
		n, secrets, err := structNode(v)
		if err != nil {
			return nil, err
		}
		if len(secrets) > 0 {
			n.HeadComment = secretsComment(secrets)
		}
		return n, nil
	case !decodedByYAML(t) && t.Kind() == reflect.Map && t.Key().Kind() == reflect.String:
		n := &yaml.Node{Kind: yaml.MappingNode, Style: flowIfEmpty(v.Len())}
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		for _, k := range keys {
			c, err := valueNode(v.MapIndex(k))
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, keyNode(k.String()), c)
		}
		return n, nil
	case !decodedByYAML(t) && t.Kind() == reflect.Slice:
		n := &yaml.Node{Kind: yaml.SequenceNode, Style: flowIfEmpty(v.Len())}
		for i := 0; i < v.Len(); i++ {
			c, err := valueNode(v.Index(i))
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, c)
		}
		return n, nil
	}
	n := &yaml.Node{}
	if err := n.Encode(v.Interface()); err != nil {
		return nil, err
	}
	maskStrings(n)
	return n, nil
}

func flowIfEmpty(n int) yaml.Style {
	if n == 0 {
		return yaml.FlowStyle
	}
	return 0
}

// maskStrings masks credentials inside string values.
func maskStrings(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		n.Value = redact.Secrets(n.Value)
	}
	for _, c := range n.Content {
		maskStrings(c)
	}
}

func keyNode(k string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k} }

// mergeMapping adds src's keys to dst; a key both hold is merged when both are mappings, and
// otherwise keeps dst's value.
func mergeMapping(dst, src *yaml.Node) {
	for i := 0; i+1 < len(src.Content); i += 2 {
		k, v := src.Content[i], src.Content[i+1]
		found := false
		for j := 0; j+1 < len(dst.Content); j += 2 {
			if dst.Content[j].Value != k.Value {
				continue
			}
			found = true
			if d := dst.Content[j+1]; d.Kind == yaml.MappingNode && v.Kind == yaml.MappingNode {
				mergeMapping(d, v)
				d.HeadComment = mergeComments(d.HeadComment, v.HeadComment)
			}
			break
		}
		if !found {
			dst.Content = append(dst.Content, k, v)
		}
	}
	// A section's secrets are shown above its key.
	for j := 0; j+1 < len(dst.Content); j += 2 {
		if c := dst.Content[j+1]; c.Kind == yaml.MappingNode && c.HeadComment != "" {
			dst.Content[j].HeadComment, c.HeadComment = mergeComments(dst.Content[j].HeadComment, c.HeadComment), ""
		}
	}
}

func mergeComments(a, b string) string {
	if b == "" || strings.Contains(a, b) {
		return a
	}
	if a == "" {
		return b
	}
	return a + "\n" + b
}

func secretsComment(secrets []string) string {
	return "secrets (environment only): " + strings.Join(secrets, ", ")
}

func appendNew(list []string, items ...string) []string {
	for _, it := range items {
		dup := false
		for _, x := range list {
			dup = dup || x == it
		}
		if !dup {
			list = append(list, it)
		}
	}
	return list
}
