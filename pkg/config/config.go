// Package config loads a service's configuration from the suite's YAML file and the
// environment, and gives the validation errors a shape that names the offending key.
package config

import (
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// EnvPrefix prefixes every environment override: PICOCLAW_APPROVAL_PENDING_TTL overrides
// approval.pending_ttl.
const EnvPrefix = "PICOCLAW_"

// Validator is implemented by every service Config.
type Validator interface {
	Validate() error
}

// Load fills dst (a pointer to a struct that already holds the defaults) from the YAML file at
// path (skipped when path is empty), then from the environment, then validates it.
//
// Environment overrides are derived from the yaml keys (PICOCLAW_ + path in upper case with
// '.' and '-' turned into '_'). A field tagged `env:"NAME"` is read from exactly NAME instead;
// combined with `yaml:"-"` that is how secrets are kept out of files.
func Load(path string, dst Validator) error {
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("read config %s: %w", path, err)
		}
		if err := Decode(data, dst); err != nil {
			return fmt.Errorf("config %s: %w", path, err)
		}
	}
	if err := ApplyEnv(dst, os.LookupEnv); err != nil {
		return err
	}
	if err := dst.Validate(); err != nil {
		return fmt.Errorf("invalid config: %w", err)
	}
	return nil
}

// Decode decodes YAML into dst strictly (see DecodeWith): the suite shares one file across all
// services, so a key another service reads (SuiteSchema) is left alone, and a key no service
// reads is an error naming its path, as is a value of the wrong type.
func Decode(data []byte, dst any) error {
	return DecodeWith(data, dst, SuiteSchema())
}

// LookupFunc is os.LookupEnv's shape, so tests can supply their own environment.
type LookupFunc func(string) (string, bool)

// ApplyEnv overrides fields of dst from the environment.
func ApplyEnv(dst any, lookup LookupFunc) error {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("config: ApplyEnv needs a pointer to a struct, got %T", dst)
	}
	return applyEnv(v.Elem(), nil, lookup)
}

var durationType = reflect.TypeFor[time.Duration]()

func applyEnv(v reflect.Value, path []string, lookup LookupFunc) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, inline := yamlName(f)
		fv := v.Field(i)
		envName, hasEnv := f.Tag.Lookup("env")
		claim, claimed := f.Tag.Lookup("config")
		if name == "-" && !hasEnv && !claimed {
			continue
		}
		fieldPath := path
		switch {
		case claimed:
			fieldPath = append(append([]string(nil), path...), strings.Split(claim, ".")...)
		case !inline:
			fieldPath = append(append([]string(nil), path...), name)
		}
		if fv.Kind() == reflect.Struct && fv.Type() != durationType {
			if err := applyEnv(fv, fieldPath, lookup); err != nil {
				return err
			}
			continue
		}
		if !hasEnv {
			envName = EnvName(fieldPath)
		}
		raw, ok := lookup(envName)
		if !ok {
			continue
		}
		if err := setFromString(fv, raw); err != nil {
			return fmt.Errorf("environment %s (%s): %w", envName, strings.Join(fieldPath, "."), err)
		}
	}
	return nil
}

// EnvName is the environment variable that overrides the yaml key path.
func EnvName(path []string) string {
	r := strings.NewReplacer("-", "_", ".", "_")
	return EnvPrefix + strings.ToUpper(r.Replace(strings.Join(path, "_")))
}

func yamlName(f reflect.StructField) (name string, inline bool) {
	tag := f.Tag.Get("yaml")
	parts := strings.Split(tag, ",")
	for _, p := range parts[1:] {
		if p == "inline" {
			return "", true
		}
	}
	if parts[0] == "" {
		return strings.ToLower(f.Name), false
	}
	return parts[0], false
}

func setFromString(fv reflect.Value, raw string) error {
	if fv.Type() == durationType {
		d, err := time.ParseDuration(raw)
		if err != nil {
			return err
		}
		fv.SetInt(int64(d))
		return nil
	}
	switch fv.Kind() {
	case reflect.String:
		fv.SetString(raw)
	case reflect.Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return err
		}
		fv.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return err
		}
		fv.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(raw, 10, 64)
		if err != nil {
			return err
		}
		fv.SetUint(n)
	case reflect.Float32, reflect.Float64:
		n, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return err
		}
		fv.SetFloat(n)
	case reflect.Slice:
		if fv.Type().Elem().Kind() != reflect.String {
			return fmt.Errorf("unsupported list type %s", fv.Type())
		}
		var items []string
		for _, s := range strings.Split(raw, ",") {
			if s = strings.TrimSpace(s); s != "" {
				items = append(items, s)
			}
		}
		out := reflect.MakeSlice(fv.Type(), len(items), len(items))
		for i, s := range items {
			out.Index(i).SetString(s)
		}
		fv.Set(out)
	default:
		return fmt.Errorf("unsupported type %s", fv.Type())
	}
	return nil
}
