package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// DecodeWith decodes the YAML document data into dst (a pointer to a struct holding the
// defaults) and checks every key against known (nil: dst's own keys only). A key dst does not
// read but known holds is left to the service that reads it. Every problem is reported at once,
// each as a KeyError naming the key's path:
//
//	approval.auto_approve.default_scop: unknown key; did you mean default_scope? (line 12)
//	approval.auto_approve.max_ttl: want a duration, got [1 2] (line 14)
//	redis.password: secrets are not read from the file; set REDIS_PASSWORD (line 3)
func DecodeWith(data []byte, dst any, known *Schema) error {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("config: decode needs a non-nil pointer, got %T", dst)
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return err
	}
	if len(doc.Content) == 0 {
		return nil
	}
	d := &decoder{known: SchemaOf(dst).Merge(known).root}
	root := resolve(doc.Content[0])
	if isNull(root) {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("the file must be a mapping of keys (line %d)", root.Line)
	}
	d.value(root, v.Elem(), "", d.known, nil)
	return d.errs.Err()
}

// decoder walks the YAML tree and the Go value together, so every error knows its key path.
type decoder struct {
	known *schemaNode
	errs  Errors
}

// claim is a field that reads a key below the struct being decoded (`config:"a.b"`).
type claim struct {
	rest []string
	v    reflect.Value
}

func (d *decoder) value(n *yaml.Node, v reflect.Value, path string, known *schemaNode, claims []claim) {
	n = resolve(n)
	t := v.Type()
	switch {
	case decodedByYAML(t):
		d.leaf(n, v, path)
	case t.Kind() == reflect.Pointer:
		if isNull(n) {
			v.SetZero()
			return
		}
		if v.IsNil() {
			v.Set(reflect.New(t.Elem()))
		}
		d.value(n, v.Elem(), path, known, claims)
	case t.Kind() == reflect.Struct:
		d.structure(n, v, path, known, claims)
	case t.Kind() == reflect.Map:
		d.mapping(n, v, path, known)
	case t.Kind() == reflect.Slice:
		d.list(n, v, path, known)
	default:
		d.leaf(n, v, path)
	}
}

// leaf lets the YAML library decode a scalar (or a type with its own decoding) and turns its
// error into one that names the key.
func (d *decoder) leaf(n *yaml.Node, v reflect.Value, path string) {
	target := v
	if !v.CanAddr() {
		target = reflect.New(v.Type()).Elem()
	}
	if err := n.Decode(target.Addr().Interface()); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			d.errs.Addf(path, "want %s, got %s (line %d)", describe(v.Type()), render(n), n.Line)
		} else {
			d.errs.Addf(path, "%v (line %d)", err, n.Line)
		}
		return
	}
	if !v.CanAddr() {
		v.Set(target)
	}
}

func (d *decoder) structure(n *yaml.Node, v reflect.Value, path string, known *schemaNode, claims []claim) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.errs.Addf(path, "want a mapping, got %s (line %d)", render(n), n.Line)
		return
	}
	fields := map[string]structField{}
	env := map[string]string{}
	if v.IsValid() {
		for _, f := range structFields(v.Type()) {
			switch {
			case f.claim != nil:
				claims = append(claims, claim{rest: f.claim, v: v.FieldByIndex(f.index)})
			case f.env != "":
				env[f.name] = f.env
			default:
				fields[f.name] = f
			}
		}
	}
	for _, p := range d.pairs(n, path) {
		key, val := p.key, p.val
		kpath := join(path, key)
		handled := false
		var below []claim
		for _, c := range claims {
			if c.rest[0] != key {
				continue
			}
			handled = true
			if len(c.rest) == 1 {
				d.value(val, c.v, kpath, known.child(key), nil)
			} else {
				below = append(below, claim{rest: c.rest[1:], v: c.v})
			}
		}
		if f, ok := fields[key]; ok {
			d.value(val, v.FieldByIndex(f.index), kpath, known.child(key), below)
			continue
		}
		if len(below) > 0 {
			// Only claims read below this key: walk it as a mapping without fields of its own.
			d.structure(resolve(val), reflect.Value{}, kpath, known.child(key), below)
			continue
		}
		if handled {
			continue
		}
		d.other(p, kpath, known, env)
	}
}

// other handles a key the value being decoded does not read: a secret, a key of another
// service (checked against the suite's keys), or a mistake.
func (d *decoder) other(p pair, kpath string, known *schemaNode, env map[string]string) {
	if e, ok := env[p.key]; ok {
		d.errs.Addf(kpath, "secrets are not read from the file; set %s (line %d)", e, p.line)
		return
	}
	if known != nil {
		if e, ok := known.env[p.key]; ok {
			d.errs.Addf(kpath, "secrets are not read from the file; set %s (line %d)", e, p.line)
			return
		}
		if c := known.child(p.key); c != nil {
			d.check(p.val, kpath, c)
			return
		}
		if known.opaque() {
			return
		}
	}
	d.errs.Addf(kpath, "unknown key%s (line %d)", d.suggest(p.key, kpath, known), p.line)
}

// check looks for unknown keys below a key another service reads, without decoding it.
func (d *decoder) check(n *yaml.Node, path string, known *schemaNode) {
	n = resolve(n)
	if known.opaque() {
		return
	}
	switch n.Kind {
	case yaml.MappingNode:
		for _, p := range d.pairs(n, path) {
			kpath := join(path, p.key)
			if c := known.child(p.key); c != nil {
				d.check(p.val, kpath, c)
				continue
			}
			d.other(p, kpath, known, nil)
		}
	case yaml.SequenceNode:
		if known.elem != nil {
			for i, item := range n.Content {
				d.check(item, fmt.Sprintf("%s[%d]", path, i), known.elem)
			}
		}
	}
}

func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string, known *schemaNode) {
	if isNull(n) {
		v.SetZero()
		return
	}
	if n.Kind != yaml.MappingNode {
		d.errs.Addf(path, "want %s, got %s (line %d)", describe(v.Type()), render(n), n.Line)
		return
	}
	t := v.Type()
	if v.IsNil() {
		v.Set(reflect.MakeMap(t))
	}
	for _, p := range d.pairs(n, path) {
		k := reflect.New(t.Key()).Elem()
		kpath := join(path, p.key)
		if err := p.keyNode.Decode(k.Addr().Interface()); err != nil {
			d.errs.Addf(kpath, "want a key of type %s (line %d)", t.Key(), p.line)
			continue
		}
		e := reflect.New(t.Elem()).Elem()
		d.value(p.val, e, kpath, known.child(p.key), nil)
		v.SetMapIndex(k, e)
	}
}

func (d *decoder) list(n *yaml.Node, v reflect.Value, path string, known *schemaNode) {
	if isNull(n) {
		v.SetZero()
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.errs.Addf(path, "want %s, got %s (line %d)", describe(v.Type()), render(n), n.Line)
		return
	}
	var elem *schemaNode
	if known != nil {
		elem = known.elem
	}
	out := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		d.value(item, out.Index(i), fmt.Sprintf("%s[%d]", path, i), elem, nil)
	}
	v.Set(out)
}

// pair is one key of a mapping.
type pair struct {
	key      string
	keyNode  *yaml.Node
	val      *yaml.Node
	line     int
	inserted bool
}

// pairs lists a mapping's keys, merge keys (<<: *anchor) expanded first so the mapping's own
// keys win; a key written twice is reported.
func (d *decoder) pairs(n *yaml.Node, path string) []pair {
	var merged, own []pair
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Tag == "!!merge" {
			src := resolve(val)
			srcs := []*yaml.Node{src}
			if src.Kind == yaml.SequenceNode {
				srcs = src.Content
			}
			for _, m := range srcs {
				if m = resolve(m); m.Kind == yaml.MappingNode {
					for _, p := range d.pairs(m, path) {
						p.inserted = true
						merged = append(merged, p)
					}
				}
			}
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.errs.Addf(path, "a key must be a plain name, got %s (line %d)", render(k), k.Line)
			continue
		}
		if first, dup := seen[k.Value]; dup {
			d.errs.Addf(join(path, k.Value), "written twice (lines %d and %d)", first, k.Line)
			continue
		}
		seen[k.Value] = k.Line
		own = append(own, pair{key: k.Value, keyNode: k, val: val, line: k.Line})
	}
	out := make([]pair, 0, len(merged)+len(own))
	for _, p := range merged {
		if _, overridden := seen[p.key]; !overridden {
			out = append(out, p)
		}
	}
	return append(out, own...)
}

// suggest proposes the known key closest to a mistyped one: a sibling within a small edit
// distance, or else the one place in the suite where a key of that name lives.
func (d *decoder) suggest(key, kpath string, known *schemaNode) string {
	if known != nil {
		best, bestDist := "", 0
		for k := range known.fields {
			dist := editDistance(normalizeKey(key), normalizeKey(k))
			if dist <= maxTypos(key) && (best == "" || dist < bestDist || (dist == bestDist && k < best)) {
				best, bestDist = k, dist
			}
		}
		if best != "" {
			return "; did you mean " + best + "?"
		}
	}
	var places []string
	var walk func(n *schemaNode, path string)
	walk = func(n *schemaNode, path string) {
		if n == nil {
			return
		}
		for k, c := range n.fields {
			p := join(path, k)
			if k == key && p != kpath {
				places = append(places, p)
			}
			walk(c, p)
		}
		walk(n.any, join(path, "<name>"))
		if n.elem != nil {
			walk(n.elem, path+"[]")
		}
	}
	walk(d.known, "")
	if len(places) == 1 {
		return "; did you mean " + places[0] + "?"
	}
	return ""
}

// maxTypos is how far a mistyped key may be from the one meant: one edit for short keys, a
// third of the length for longer ones.
func maxTypos(key string) int {
	return max(1, len(key)/3)
}

// normalizeKey makes case and - versus _ no difference (gateway_line is gateway-line).
func normalizeKey(k string) string {
	return strings.ReplaceAll(strings.ToLower(k), "-", "_")
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		return resolve(n.Content[0])
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// describe names what a key of type t takes, for "want …" messages.
func describe(t reflect.Type) string {
	noun := nounOf(t)
	if strings.HasPrefix(noun, "list") || strings.HasPrefix(noun, "mapping") {
		return "a " + noun
	}
	switch noun[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "an " + noun
	}
	return "a " + noun
}

func nounOf(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == durationType:
		return "duration"
	case t == secretType:
		return "string"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "boolean (true or false)"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Slice, reflect.Array:
		return "list of " + plural(nounOf(t.Elem()))
	case reflect.Map:
		return "mapping of names to " + plural(nounOf(t.Elem()))
	case reflect.Struct:
		return "mapping"
	}
	return t.String()
}

func plural(noun string) string {
	head, tail, found := strings.Cut(noun, " ")
	if found {
		return plural(head) + " " + tail
	}
	return noun + "s"
}

// render shows a YAML value in an error message, briefly.
func render(n *yaml.Node) string {
	var s string
	switch n.Kind {
	case yaml.ScalarNode:
		s = n.Value
		if n.ShortTag() == "!!str" {
			s = strconv.Quote(s)
		}
	case yaml.SequenceNode, yaml.MappingNode:
		var v any
		if err := n.Decode(&v); err != nil {
			s = "a " + map[yaml.Kind]string{yaml.SequenceNode: "list", yaml.MappingNode: "mapping"}[n.Kind]
		} else {
			s = fmt.Sprint(sortedValue(v))
		}
	default:
		s = "?"
	}
	if r := []rune(s); len(r) > 60 {
		s = string(r[:59]) + "…"
	}
	return s
}

// sortedValue turns maps into "{a: 1, b: 2}" text with sorted keys (fmt prints map[...]).
func sortedValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s: %v", k, sortedValue(x[k]))
		}
		return stringer("{" + strings.Join(parts, ", ") + "}")
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = sortedValue(e)
		}
		return out
	}
	return v
}

type stringer string

func (s stringer) String() string { return string(s) }
