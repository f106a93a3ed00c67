//go:build !sqliteonly

package inbox

import (
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

func init() {
	testEngines["redis"] = func(t *testing.T, stream string) (Engine, Config, *Store) {
		r := testinfra.Redis(t)
		e := RedisEngine(r.Client)
		cfg := Config{Stream: r.Prefix + stream, Group: "g", Seal: []byte("inbox-test-seal-key-0123456789")}
		s, err := NewStoreOn(e, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return e, cfg, s
	}
}
