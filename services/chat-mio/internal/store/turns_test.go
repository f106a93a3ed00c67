package store

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

// The direct read of a stored turn gives what encoding/json gives, for every turn: those it
// cannot read directly (escapes, other layouts) go through encoding/json.
func FuzzDecodeTurnAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range []string{"hello", "こんにちは", `say "hi"`, "tab\there", "<b>&</b>", "\u2028", "bad \xff utf-8", ""} {
		f.Add("user", s, int64(1764300000123456789), 0)
		f.Add("assistant", s, int64(0), 9*3600)
	}
	f.Fuzz(func(t *testing.T, role, text string, unixNano int64, offset int) {
		at := time.Unix(0, unixNano).In(time.FixedZone("", offset%(24*3600)))
		enc, err := encodeTurns([]domain.Turn{{Role: role, Text: text, At: at}})
		if err != nil {
			return // a year outside JSON's time range
		}
		checkAgrees(t, []byte(enc[0]))
	})
}

func checkAgrees(t *testing.T, raw []byte) {
	t.Helper()
	var want domain.Turn
	wantOK := json.Unmarshal(raw, &want) == nil
	got, ok := decodeTurn(raw)
	if ok != wantOK || (ok && !reflect.DeepEqual(got, want)) {
		t.Fatalf("%s: decodeTurn = %#v, %v; encoding/json = %#v, %v", raw, got, ok, want, wantOK)
	}
}

func TestDecodeTurnOtherForms(t *testing.T) {
	for _, raw := range []string{
		`{"role":"user","text":"hi","at":"2026-11-28T07:00:00Z"}`,
		`{"text":"hi","role":"user","at":"2026-11-28T07:00:00Z"}`,
		`{"role":"user","text":"a\nb","at":"2026-11-28T07:00:00+09:00"}`,
		`{"role":"user","text":"hi","at":"2026-11-28T07:00:00Z","extra":1}`,
		`{"role":"user","text":"hi","at":"not a time"}`,
		`{"role":"user","text":"hi","at":"2026-11-28T07:00:00Z"`,
		`{"role":"user","text":"hi"}`,
		`null`, `garbage`, ``,
	} {
		checkAgrees(t, []byte(raw))
	}
	if _, ok := decodeTurnFast([]byte(`{"role":"user","text":"hi","at":"2026-11-28T07:00:00Z"}`)); !ok {
		t.Fatal("the stored form is not read directly")
	}
}

func BenchmarkDecodeTurn(b *testing.B) {
	enc, _ := encodeTurns([]domain.Turn{{Role: "assistant", Text: "今日はいい天気ですね。散歩に行きましょうか?", At: time.Now()}})
	raw := []byte(enc[0])
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := decodeTurn(raw); !ok {
			b.Fatal("no turn")
		}
	}
}
