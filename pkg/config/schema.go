package config

import (
	_ "embed"
	"reflect"
	"sort"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"
)

// Schema is the set of keys a configuration file may hold: the key paths of one or more Config
// structs (SchemaOf) or of the whole suite (SuiteSchema). A key outside it is a mistake.
type Schema struct {
	root *schemaNode
}

// schemaNode is one mapping of the file.
type schemaNode struct {
	// fields are the keys of a mapping with fixed keys (a struct).
	fields map[string]*schemaNode
	// any is the value of every key of a mapping with free keys (a Go map).
	any *schemaNode
	// elem is the shape of a list's items.
	elem *schemaNode
	// env are the keys kept out of the file (secrets): key → the environment variable to use.
	env map[string]string
}

// opaque reports whether the node says nothing about what is below it (a scalar, or a value
// with its own YAML decoding).
func (n *schemaNode) opaque() bool {
	return n == nil || (n.fields == nil && n.any == nil && n.elem == nil && n.env == nil)
}

// child is the node of key k below n (nil: not a known key).
func (n *schemaNode) child(k string) *schemaNode {
	if n == nil {
		return nil
	}
	if c := n.fields[k]; c != nil {
		return c
	}
	return n.any
}

func (n *schemaNode) field(k string) *schemaNode {
	if n.fields == nil {
		n.fields = map[string]*schemaNode{}
	}
	c := n.fields[k]
	if c == nil {
		c = &schemaNode{}
		n.fields[k] = c
	}
	return c
}

// merge adds o's keys to n.
func (n *schemaNode) merge(o *schemaNode) {
	if o == nil {
		return
	}
	for k, c := range o.fields {
		n.field(k).merge(c)
	}
	if o.any != nil {
		if n.any == nil {
			n.any = &schemaNode{}
		}
		n.any.merge(o.any)
	}
	if o.elem != nil {
		if n.elem == nil {
			n.elem = &schemaNode{}
		}
		n.elem.merge(o.elem)
	}
	for k, e := range o.env {
		if n.env == nil {
			n.env = map[string]string{}
		}
		n.env[k] = e
	}
}

// SchemaOf is the schema of the given Config structs (or pointers to them) together.
func SchemaOf(configs ...any) *Schema {
	s := &Schema{root: &schemaNode{}}
	for _, c := range configs {
		t := reflect.TypeOf(c)
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t != nil {
			s.root.merge(schemaOfType(t, map[reflect.Type]bool{}))
		}
	}
	return s
}

// Merge returns the schema of s and o together.
func (s *Schema) Merge(o *Schema) *Schema {
	out := &Schema{root: &schemaNode{}}
	if s != nil {
		out.root.merge(s.root)
	}
	if o != nil {
		out.root.merge(o.root)
	}
	return out
}

var (
	unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()
	secretType      = reflect.TypeFor[Secret]()
)

// decodedByYAML reports whether values of t are decoded by the YAML library as a whole: scalars,
// durations and types with their own UnmarshalYAML.
func decodedByYAML(t reflect.Type) bool {
	if t == durationType || t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return true
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map, reflect.Slice, reflect.Pointer:
		return t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8
	}
	return true
}

func schemaOfType(t reflect.Type, seen map[reflect.Type]bool) *schemaNode {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	n := &schemaNode{}
	if decodedByYAML(t) || seen[t] {
		return n
	}
	switch t.Kind() {
	case reflect.Map:
		if t.Key().Kind() == reflect.String {
			n.any = schemaOfType(t.Elem(), seen)
		}
	case reflect.Slice:
		n.elem = schemaOfType(t.Elem(), seen)
	case reflect.Struct:
		seen[t] = true
		defer delete(seen, t)
		n.fields = map[string]*schemaNode{}
		for _, f := range structFields(t) {
			switch {
			case f.claim != nil:
				c := n
				for _, k := range f.claim[:len(f.claim)-1] {
					c = c.field(k)
				}
				c.field(f.claim[len(f.claim)-1]).merge(schemaOfType(f.typ, seen))
			case f.env != "":
				if n.env == nil {
					n.env = map[string]string{}
				}
				n.env[f.name] = f.env
			default:
				n.field(f.name).merge(schemaOfType(f.typ, seen))
			}
		}
	}
	return n
}

// structField is one key of a struct as the file sees it.
type structField struct {
	name  string
	index []int
	typ   reflect.Type
	// env is set for a field kept out of the file (`yaml:"-" env:"NAME"`): a secret.
	env string
	// claim is set for a field tagged `config:"a.b"`: it reads the key a.b below the struct,
	// inside a section another field owns (a service's own keys in a shared section).
	claim []string
}

// structFields lists t's keys in declaration order, inline structs flattened.
func structFields(t reflect.Type) []structField {
	var out []structField
	var walk func(t reflect.Type, index []int)
	walk = func(t reflect.Type, index []int) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			idx := append(append([]int(nil), index...), i)
			if p, ok := f.Tag.Lookup("config"); ok && p != "" {
				out = append(out, structField{name: p, index: idx, typ: f.Type, claim: strings.Split(p, ".")})
				continue
			}
			name, inline := yamlName(f)
			if inline {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					walk(ft, idx)
				}
				continue
			}
			if name == "-" {
				if env, ok := f.Tag.Lookup("env"); ok {
					out = append(out, structField{name: snake(f.Name), index: idx, typ: f.Type, env: env})
				}
				continue
			}
			out = append(out, structField{name: name, index: idx, typ: f.Type})
		}
	}
	walk(t, nil)
	return out
}

// snake turns a Go field name into the key a person would write: ServiceKey → service_key,
// MigrateDSN → migrate_dsn.
func snake(s string) string {
	var b strings.Builder
	r := []rune(s)
	for i, c := range r {
		if unicode.IsUpper(c) {
			if i > 0 && (unicode.IsLower(r[i-1]) || (i+1 < len(r) && unicode.IsLower(r[i+1]) && unicode.IsUpper(r[i-1]))) {
				b.WriteByte('_')
			}
			c = unicode.ToLower(c)
		}
		b.WriteRune(c)
	}
	return b.String()
}

// String lists the schema one key path a line, sorted: "a.b" for a key, "a.*" for the values
// of a mapping with free keys, "a[]" for a list's items, "a.b=env:NAME" for a secret.
func (s *Schema) String() string {
	var lines []string
	var walk func(n *schemaNode, path string)
	walk = func(n *schemaNode, path string) {
		if n.opaque() && path != "" {
			lines = append(lines, path)
		}
		for k, c := range n.fields {
			walk(c, join(path, k))
		}
		if n.any != nil {
			walk(n.any, join(path, "*"))
		}
		if n.elem != nil {
			walk(n.elem, path+"[]")
		}
		for k, e := range n.env {
			lines = append(lines, join(path, k)+"=env:"+e)
		}
	}
	if s != nil && s.root != nil {
		walk(s.root, "")
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

// ParseSchema reads the form String writes.
func ParseSchema(text string) *Schema {
	s := &Schema{root: &schemaNode{}}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		path, env, secret := strings.Cut(line, "=env:")
		segs := strings.Split(path, ".")
		n := s.root
		for i, seg := range segs {
			last := i == len(segs)-1
			if secret && last {
				if n.env == nil {
					n.env = map[string]string{}
				}
				n.env[seg] = env
				break
			}
			key, depth := seg, 0
			for strings.HasSuffix(key, "[]") {
				key, depth = strings.TrimSuffix(key, "[]"), depth+1
			}
			if key == "*" {
				if n.any == nil {
					n.any = &schemaNode{}
				}
				n = n.any
			} else if key != "" {
				n = n.field(key)
			}
			for ; depth > 0; depth-- {
				if n.elem == nil {
					n.elem = &schemaNode{}
				}
				n = n.elem
			}
		}
	}
	return s
}

// suiteKeys is every key of the suite's file: the union of every service's Config
// (suite_keys.txt; a test in cmd/picoclaw checks it against the services and rewrites it with
// -update).
//
//go:embed suite_keys.txt
var suiteKeys string

// SuiteSchema is the schema of the suite's shared file: a service accepts a key that another
// service reads, and rejects a key that none reads.
func SuiteSchema() *Schema { return ParseSchema(suiteKeys) }

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}
