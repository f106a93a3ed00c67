package deploy

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

var update = flag.Bool("update", false, "rewrite the vendored Kubernetes schemas under deploy/k8s/schemas")

// schemaDir holds the JSON schemas kubeconform validates the rendered manifests with (make
// k8s-check), one per kind the manifests use, named as kubeconform looks them up
// ({{.ResourceKind}}{{.KindSuffix}}.json).
const schemaDir = "../../deploy/k8s/schemas"

// kinds are the kinds deploy/k8s renders; TestManifests fails on any other.
var kinds = []struct {
	apiVersion, kind string
	obj              any
}{
	{"apps/v1", "Deployment", appsv1.Deployment{}},
	{"v1", "Service", corev1.Service{}},
	{"v1", "ConfigMap", corev1.ConfigMap{}},
	{"v1", "Secret", corev1.Secret{}},
	{"v1", "PersistentVolumeClaim", corev1.PersistentVolumeClaim{}},
	{"policy/v1", "PodDisruptionBudget", policyv1.PodDisruptionBudget{}},
	{"networking.k8s.io/v1", "NetworkPolicy", networkingv1.NetworkPolicy{}},
}

// schemaFile is kubeconform's name for a kind's schema: deployment-apps-v1.json,
// networkpolicy-networking-v1.json, service-v1.json.
func schemaFile(apiVersion, kind string) string {
	group, version, ok := strings.Cut(apiVersion, "/")
	suffix := "-" + strings.ToLower(strings.Split(group, ".")[0])
	if ok {
		suffix += "-" + strings.ToLower(version)
	}
	return strings.ToLower(kind) + suffix + ".json"
}

// TestVendoredSchemas regenerates every schema from the k8s.io/api types this module
// requires and compares it with the vendored copy (-update rewrites them).
func TestVendoredSchemas(t *testing.T) {
	for _, k := range kinds {
		got, err := kindSchema(k.apiVersion, k.kind, reflect.TypeOf(k.obj))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(schemaDir, schemaFile(k.apiVersion, k.kind))
		if *update {
			if err := os.MkdirAll(schemaDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./e2e/deploy -run TestVendoredSchemas -update writes it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what the k8s.io/api types generate: go test ./e2e/deploy -run TestVendoredSchemas -update", path)
		}
	}
	entries, err := os.ReadDir(schemaDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(kinds) {
		t.Errorf("%s holds %d files, want the %d kinds the manifests use", schemaDir, len(entries), len(kinds))
	}
}

// TestSchemaGenerator checks what the generator makes of the cases it treats specially, so a
// wrong schema cannot pass unnoticed because manifests and schemas agree by accident.
func TestSchemaGenerator(t *testing.T) {
	raw, err := kindSchema("apps/v1", "Deployment", reflect.TypeOf(appsv1.Deployment{}))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties  map[string]json.RawMessage `json:"properties"`
		Required    []string                   `json:"required"`
		Definitions map[string]map[string]any  `json:"definitions"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(s.Properties["kind"]), `"Deployment"`) || !strings.Contains(string(s.Properties["apiVersion"]), `"apps/v1"`) {
		t.Errorf("kind/apiVersion not pinned: %s %s", s.Properties["kind"], s.Properties["apiVersion"])
	}
	container := s.Definitions["io.k8s.api.core.v1.Container"]
	if container["additionalProperties"] != false {
		t.Errorf("Container accepts unknown fields: %v", container["additionalProperties"])
	}
	if req, _ := container["required"].([]any); len(req) != 1 || req[0] != "name" {
		t.Errorf("Container required = %v, want [name]", container["required"])
	}
	props, _ := container["properties"].(map[string]any)
	if _, ok := props["readinessProbe"]; !ok {
		t.Errorf("Container has no readinessProbe property: %v", props)
	}
	for name, want := range map[string]string{
		"io.k8s.apimachinery.pkg.api.resource.Quantity":   `"oneOf":[{"type":"string"},{"type":"number"}]`,
		"io.k8s.apimachinery.pkg.util.intstr.IntOrString": `"oneOf":[{"type":"string"},{"type":"integer"}]`,
	} {
		b, _ := json.Marshal(s.Definitions[name])
		if !strings.Contains(string(b), want) {
			t.Errorf("%s = %s, want %s", name, b, want)
		}
	}
	// The PodSpec's inlined volume sources and the metadata's embedded TypeMeta are flattened.
	vol, _ := s.Definitions["io.k8s.api.core.v1.Volume"]["properties"].(map[string]any)
	if _, ok := vol["persistentVolumeClaim"]; !ok {
		t.Errorf("Volume lacks the inlined VolumeSource: %v", vol)
	}
}

// kindSchema is a standalone JSON schema (draft-07) for one kind: the object's structure from
// its Go type, unknown fields refused, fields without omitempty required, apiVersion and kind
// fixed. It says nothing of what only the API server's validation checks (label syntax,
// ranges, immutable fields).
func kindSchema(apiVersion, kind string, t reflect.Type) ([]byte, error) {
	g := &generator{defs: map[string]map[string]any{}}
	root, err := g.structSchema(t)
	if err != nil {
		return nil, err
	}
	props := root["properties"].(map[string]any)
	props["apiVersion"] = map[string]any{"type": "string", "enum": []string{apiVersion}}
	props["kind"] = map[string]any{"type": "string", "enum": []string{kind}}
	required, _ := root["required"].([]string)
	root["required"] = sortedUnique(append(required, "apiVersion", "kind"))
	root["$schema"] = "http://json-schema.org/draft-07/schema#"
	root["description"] = fmt.Sprintf("%s %s, generated from k8s.io/api by e2e/deploy (TestVendoredSchemas)", apiVersion, kind)
	root["definitions"] = g.defs
	b, err := json.MarshalIndent(root, "", " ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

type generator struct {
	defs map[string]map[string]any
}

var (
	quantityType    = reflect.TypeOf(resource.Quantity{})
	intOrStringType = reflect.TypeOf(intstr.IntOrString{})
	timeType        = reflect.TypeOf(metav1.Time{})
	microTimeType   = reflect.TypeOf(metav1.MicroTime{})
	durationType    = reflect.TypeOf(metav1.Duration{})
	fieldsV1Type    = reflect.TypeOf(metav1.FieldsV1{})
	rawType         = reflect.TypeOf(runtime.RawExtension{})
	marshaler       = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
)

// defName names a type as the Kubernetes OpenAPI does: io.k8s.api.core.v1.Container.
func defName(t reflect.Type) string {
	p := strings.ReplaceAll(t.PkgPath(), "/", ".")
	if rest, ok := strings.CutPrefix(p, "k8s.io."); ok {
		p = "io.k8s." + rest
	}
	return p + "." + t.Name()
}

// schema is the schema of a value of type t, a $ref for every named struct.
func (g *generator) schema(t reflect.Type) (map[string]any, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case quantityType:
		return g.ref(t, map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}}})
	case intOrStringType:
		return g.ref(t, map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}})
	case timeType, microTimeType:
		return map[string]any{"type": "string", "format": "date-time"}, nil
	case durationType:
		return map[string]any{"type": "string"}, nil
	case fieldsV1Type, rawType:
		return map[string]any{"type": "object"}, nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}, nil
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}, nil
	case reflect.String:
		return map[string]any{"type": "string"}, nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "format": "byte"}, nil
		}
		items, err := g.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": items}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("%s: map key %s", t, t.Key())
		}
		values, err := g.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "object", "additionalProperties": values}, nil
	case reflect.Interface:
		return map[string]any{}, nil
	case reflect.Struct:
		if _, done := g.defs[defName(t)]; !done {
			g.defs[defName(t)] = nil // a type met again while it is being built is referenced
			s, err := g.structSchema(t)
			if err != nil {
				return nil, err
			}
			g.defs[defName(t)] = s
		}
		return map[string]any{"$ref": "#/definitions/" + defName(t)}, nil
	}
	return nil, fmt.Errorf("%s: no schema for kind %s", t, t.Kind())
}

func (g *generator) ref(t reflect.Type, s map[string]any) (map[string]any, error) {
	g.defs[defName(t)] = s
	return map[string]any{"$ref": "#/definitions/" + defName(t)}, nil
}

// structSchema lists a struct's JSON fields, with inline embedded structs flattened.
func (g *generator) structSchema(t reflect.Type) (map[string]any, error) {
	if reflect.PointerTo(t).Implements(marshaler) || t.Implements(marshaler) {
		return nil, fmt.Errorf("%s marshals itself: give it a schema in generator.schema", t)
	}
	props := map[string]any{}
	var required []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" && (f.Anonymous || strings.Contains(","+opts+",", ",inline,")) {
			inner, err := g.structSchema(f.Type)
			if err != nil {
				return nil, err
			}
			for k, v := range inner["properties"].(map[string]any) {
				props[k] = v
			}
			if r, ok := inner["required"].([]string); ok {
				required = append(required, r...)
			}
			continue
		}
		if name == "" {
			return nil, fmt.Errorf("%s.%s has no json name", t, f.Name)
		}
		s, err := g.schema(f.Type)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", t, f.Name, err)
		}
		props[name] = s
		if !strings.Contains(","+opts+",", ",omitempty,") && !strings.Contains(","+opts+",", ",omitzero,") {
			required = append(required, name)
		}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = sortedUnique(required)
	}
	return s, nil
}

func sortedUnique(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
