package telemetry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
)

// slowLogger is the handler lineHandler stands in for: contextHandler over slog's own JSON
// handler with MaskAttr.
func slowHandler(w *bytes.Buffer, level slog.Level) slog.Handler {
	return &contextHandler{next: slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: MaskAttr})}
}

type logValuer struct{ v slog.Value }

func (l logValuer) LogValue() slog.Value { return l.v }

type panicValuer struct{}

func (panicValuer) LogValue() slog.Value { panic("no value") }

type marshalErr struct{}

func (marshalErr) Error() string                { return "as error" }
func (marshalErr) MarshalJSON() ([]byte, error) { return []byte(`{"as":"json"}`), nil }

// attrCases are values of every kind the suite logs and of those it hands to slog's handler.
func attrCases() [][]slog.Attr {
	tokyo := time.FixedZone("JST", 9*3600)
	return [][]slog.Attr{
		nil,
		{slog.String("s", "plain")},
		{slog.String("quote", `he said "hi" \ bye`), slog.String("ctl", "a\nb\rc\td\x00e\x1f\x7f"), slog.String("html", "<a href='x'>&amp;</a>")},
		{slog.String("utf8", "日本語テキスト 🎉"), slog.String("bad", "a\xffb\xc3"), slog.String("seps", "x\u2028y\u2029z")},
		{slog.Int("i", -42), slog.Int64("big", math.MaxInt64), slog.Uint64("u", math.MaxUint64), slog.Bool("t", true), slog.Bool("f", false)},
		{slog.Float64("conf", 0.8), slog.Float64("zero", 0), slog.Float64("neg", -1.5), slog.Float64("tiny", 1.5e-7), slog.Float64("huge", 2e21),
			slog.Float64("e9", 1e-9), slog.Float64("whole", 3), slog.Float64("third", 1.0/3), slog.Float64("negzero", math.Copysign(0, -1))},
		{slog.Float64("nan", math.NaN())},
		{slog.Float64("inf", math.Inf(1)), slog.String("after", "x")},
		{slog.Duration("d", 1500*time.Millisecond), slog.Duration("negd", -time.Second)},
		{slog.Time("at", time.Date(2026, 11, 29, 15, 4, 5, 123456789, time.UTC)), slog.Time("jst", time.Date(2026, 1, 2, 3, 4, 5, 0, tokyo)),
			slog.Time("zero", time.Time{})},
		{slog.Time("far", time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC))},
		{slog.Any("route", Label("CHAT")), slog.Any("q", Label(`a"b`)), slog.Any("error", errors.New("dial: password=hunter2 refused"))},
		{slog.Any("marshal_err", marshalErr{})},
		{slog.String("api_key", "sk-abcdef0123456789abcdef"), slog.String("text", "token sk-ant-api03-abcdefghijklmnop0123456789 here"),
			slog.String("authorization", "Bearer abc.def.ghi"), slog.String("empty_secret", "")},
		{slog.String("job_id", "job_20261129_001"), slog.String("trace_id", "852f2c4397fa52cd5f476a342d05631c")},
		{slog.String("job_id", "not a job"), slog.String("span_id", "XYZ")},
		{slog.Any("valuer", logValuer{slog.StringValue("resolved")}), slog.Any("valuer_int", logValuer{slog.IntValue(7)})},
		{slog.Any("valuer_group", logValuer{slog.GroupValue(slog.String("in", "g"))})},
		{slog.Any("valuer_panics", panicValuer{}), slog.Int("after", 1)},
		{slog.Any("valuer_error", logValuer{slog.AnyValue(errors.New("token=abc123456789"))}), slog.Any("valuer_label", logValuer{slog.AnyValue(Label("L"))})},
		{slog.String("long", strings.Repeat("x", 20<<10))},
		{slog.Group("g", slog.String("a", "1"), slog.Int("b", 2))},
		{slog.Group("empty")},
		{slog.Any("map", map[string]int{"a": 1}), slog.Any("slice", []string{"x"}), slog.Any("nil", nil)},
		{slog.Attr{}, slog.String("", "no key"), slog.Int("", 0)},
		{slog.String("k\"ey\n", "v"), slog.String("日本", "語")},
	}
}

// contexts are the contexts records are logged under: none, a JobID, a span, both.
func contexts() map[string]context.Context {
	tid, _ := trace.TraceIDFromHex("852f2c4397fa52cd5f476a342d05631c")
	sid, _ := trace.SpanIDFromHex("6d0ad8333bfb7b7c")
	span := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid}))
	m, _ := baggage.NewMember(jobid.BaggageKey, "job_20261129_042")
	b, _ := baggage.New(m)
	// A JobID that is not one, holding a secret: masked like any other value.
	bad, _ := baggage.NewMemberRaw(jobid.BaggageKey, "password=hunter22 sk-abcdef0123456789abcdef")
	bb, _ := baggage.New(bad)
	return map[string]context.Context{
		"none": context.Background(), "job": baggage.ContextWithBaggage(context.Background(), b),
		"span": span, "both": baggage.ContextWithBaggage(span, b), "nil": nil,
		"secret job": baggage.ContextWithBaggage(span, bb),
	}
}

// TestLineHandlerWritesWhatSlogWrites: for every kind of value, With chain, group, level and
// context, the suite's handler writes byte for byte what slog's JSON handler with MaskAttr and
// the context's ids writes.
func TestLineHandlerWritesWhatSlogWrites(t *testing.T) {
	at := time.Date(2026, 11, 29, 15, 4, 5, 6007, time.UTC)
	withs := map[string]func(slog.Handler) slog.Handler{
		"bare":    func(h slog.Handler) slog.Handler { return h },
		"service": func(h slog.Handler) slog.Handler { return h.WithAttrs([]slog.Attr{slog.String("service", "chat-mio")}) },
		"two withs": func(h slog.Handler) slog.Handler {
			return h.WithAttrs([]slog.Attr{slog.String("service", "x")}).WithAttrs([]slog.Attr{slog.Any("route", Label("CODE")), slog.Float64("f", 0.25), slog.String("password", "p")})
		},
		"with job": func(h slog.Handler) slog.Handler {
			return h.WithAttrs([]slog.Attr{slog.String("job_id", "job_20261129_007")})
		},
		"with group value": func(h slog.Handler) slog.Handler {
			return h.WithAttrs([]slog.Attr{slog.Group("g", slog.Int("a", 1))}).WithAttrs([]slog.Attr{slog.Int("b", 2)})
		},
		"with map": func(h slog.Handler) slog.Handler {
			return h.WithAttrs([]slog.Attr{slog.Any("m", map[string]int{"a": 1})})
		},
		"group": func(h slog.Handler) slog.Handler {
			return h.WithAttrs([]slog.Attr{slog.String("service", "s")}).WithGroup("req")
		},
		"group with":  func(h slog.Handler) slog.Handler { return h.WithGroup("req").WithAttrs([]slog.Attr{slog.Int("n", 1)}) },
		"empty group": func(h slog.Handler) slog.Handler { return h.WithGroup("") },
	}
	levels := []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError, slog.LevelInfo + 2, slog.LevelError + 4}
	n := 0
	for wname, with := range withs {
		for cname, ctx := range contexts() {
			for i, attrs := range attrCases() {
				for _, lv := range levels {
					var want, got bytes.Buffer
					slow, fast := with(slowHandler(&want, slog.LevelDebug)), with(newLineHandler(&got, slog.LevelDebug))
					r := slog.NewRecord(at, lv, fmt.Sprintf("case.%d \"quoted\"\n", i), 0)
					r.AddAttrs(attrs...)
					if err := slow.Handle(ctx, r.Clone()); err != nil {
						t.Fatal(err)
					}
					if err := fast.Handle(ctx, r.Clone()); err != nil {
						t.Fatal(err)
					}
					if got.String() != want.String() {
						t.Fatalf("%s, context %s, case %d, level %v:\n got %s\nwant %s", wname, cname, i, lv, got.String(), want.String())
					}
					n++
				}
			}
		}
	}
	t.Logf("%d records compared", n)
}

// TestLineHandlerEscapesAsSlogDoes: random strings (control characters, quotes, invalid UTF-8,
// line separators, secrets) as keys, messages and values.
func TestLineHandlerEscapesAsSlogDoes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "Z", " ", "\"", "\\", "\n", "\r", "\t", "\x00", "\x01", "\x1f", "\x7f", "<", ">", "&", "é", "日", "🎉",
		"\xff", "\xc3", "\xe2\x80", "\u2028", "\u2029", "sk-abcdef0123456789abcdef", "password=", "Bearer ", "ghp_0123456789abcdefABCDEF0123456789abcd"}
	str := func() string {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	at := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	for i := range 3000 {
		var want, got bytes.Buffer
		r := slog.NewRecord(at, slog.LevelInfo, str(), 0)
		r.AddAttrs(slog.String(str(), str()), slog.Any(str()+"x", Label(str())), slog.Any("error", errors.New(str())), slog.Float64("f", rng.NormFloat64()*math.Pow(10, float64(rng.IntN(50)-25))))
		if err := slowHandler(&want, slog.LevelInfo).Handle(context.Background(), r.Clone()); err != nil {
			t.Fatal(err)
		}
		if err := newLineHandler(&got, slog.LevelInfo).Handle(context.Background(), r.Clone()); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("record %d:\n got %q\nwant %q", i, got.String(), want.String())
		}
	}
}

func TestLineHandlerEnabledFollowsTheLevel(t *testing.T) {
	h := newLineHandler(&bytes.Buffer{}, slog.LevelWarn)
	if h.Enabled(context.Background(), slog.LevelInfo) || !h.Enabled(context.Background(), slog.LevelWarn) {
		t.Fatal("level not kept")
	}
	if g := h.WithGroup("g"); g.Enabled(context.Background(), slog.LevelInfo) || !g.Enabled(context.Background(), slog.LevelError) {
		t.Fatal("level not kept through a group")
	}
}

// BenchmarkLogLine is a router.decision line as router-shiro logs it, under a span and a JobID.
func BenchmarkLogLine(b *testing.B) {
	ctx := contexts()["both"]
	attrs := []slog.Attr{slog.Any("job_id", Label("job_20261129_001")), slog.Any("source", Label("signals")), slog.Any("route", Label("CHAT")),
		slog.Float64("confidence", 0.8), slog.String("reason", "conversation: a short message without code, URL, file name or request"),
		slog.Any("evidence", Label("short, no code, URL or request")), slog.Any("matched", Label("signals")), slog.Any("channel", Label("line")),
		slog.Bool("local_only", false), slog.Bool("deliberation", false), slog.Bool("refused", false)}
	for name, h := range map[string]slog.Handler{"slog": &contextHandler{next: slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{ReplaceAttr: MaskAttr})}, "line": newLineHandler(io.Discard, slog.LevelInfo)} {
		b.Run(name, func(b *testing.B) {
			l := slog.New(h).With("service", "router-shiro")
			b.ReportAllocs()
			for b.Loop() {
				l.LogAttrs(ctx, slog.LevelInfo, "router.decision", attrs...)
			}
		})
	}
}

// TestLineHandlerRecordTimes: the record's own time as slog writes it — local with a monotonic
// reading, absent when zero, an error outside years 0–9999.
func TestLineHandlerRecordTimes(t *testing.T) {
	for _, at := range []time.Time{time.Now(), time.Now().In(time.FixedZone("JST", 9*3600)), {},
		time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)} {
		var want, got bytes.Buffer
		r := slog.NewRecord(at, slog.LevelInfo, "m", 0)
		r.AddAttrs(slog.String("k", "v"))
		_ = slowHandler(&want, slog.LevelInfo).Handle(context.Background(), r.Clone())
		_ = newLineHandler(&got, slog.LevelInfo).Handle(context.Background(), r.Clone())
		if got.String() != want.String() {
			t.Fatalf("time %v:\n got %s\nwant %s", at, got.String(), want.String())
		}
	}
}

// TestLineHandlerReusesItsBufferCleanly: a long line, then a short one from the same pool.
func TestLineHandlerReusesItsBufferCleanly(t *testing.T) {
	var want, got bytes.Buffer
	slow, fast := slowHandler(&want, slog.LevelInfo), newLineHandler(&got, slog.LevelInfo)
	for _, v := range []string{strings.Repeat("y", 8<<10), "short", strings.Repeat("z", 40<<10), "s"} {
		r := slog.NewRecord(time.Unix(1, 0), slog.LevelInfo, "m", 0)
		r.AddAttrs(slog.String("v", v))
		_ = slow.Handle(context.Background(), r.Clone())
		_ = fast.Handle(context.Background(), r.Clone())
	}
	if got.String() != want.String() {
		t.Fatalf("got %q\nwant %q", got.String(), want.String())
	}
}

// overlapWriter fails the test when two writes overlap: every write to the log is serialised,
// the lines this handler writes and those it hands to slog's.
type overlapWriter struct {
	t     *testing.T
	busy  atomic.Bool
	lines atomic.Int64
}

func (w *overlapWriter) Write(p []byte) (int, error) {
	if !w.busy.CompareAndSwap(false, true) {
		w.t.Error("two writes at once")
	}
	time.Sleep(time.Microsecond)
	w.lines.Add(int64(bytes.Count(p, []byte("\n"))))
	w.busy.Store(false)
	return len(p), nil
}

func TestLineHandlerSerialisesEveryWrite(t *testing.T) {
	w := &overlapWriter{t: t}
	l := NewLogger(w, "info", "svc")
	grouped := l.WithGroup("g")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				if g%2 == 0 {
					l.Info("flat", "i", i)
				} else {
					grouped.Info("grouped", "m", map[string]int{"i": i})
				}
			}
		})
	}
	wg.Wait()
	if n := w.lines.Load(); n != 8*200 {
		t.Fatalf("%d lines, want %d", n, 8*200)
	}
}

// TestNewLoggerWritesWhatSlogWrites: the logger the services get, With chains included.
func TestNewLoggerWritesWhatSlogWrites(t *testing.T) {
	var want, got bytes.Buffer
	slow := slog.New(slowHandler(&want, slog.LevelInfo)).With("service", "chat-mio").With("api_key", "sk-abcdef0123456789abcdef")
	fast := NewLogger(&got, "info", "chat-mio").With("api_key", "sk-abcdef0123456789abcdef")
	ctx := contexts()["both"]
	for _, l := range []*slog.Logger{slow, fast} {
		l.LogAttrs(ctx, slog.LevelInfo, "message.replied", slog.String("session_id", "line:U1"), slog.Any("route", Label("CHAT")),
			slog.Float64("confidence", 0.8), slog.String("text", "my password=hunter22"))
		l.DebugContext(ctx, "not.written")
	}
	// The records' own times differ: compare what follows them.
	after := func(s string) string { return s[strings.Index(s, `"level"`):] }
	if after(got.String()) != after(want.String()) || strings.Contains(got.String(), "hunter22") || strings.Contains(got.String(), "sk-abcdef") {
		t.Fatalf("got %s\nwant %s", got.String(), want.String())
	}
}
