package telemetry

import (
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
)

// lineHandler writes a record whose values are flat — strings, numbers, booleans, durations,
// times, Labels and errors, which is what the suite logs — itself, as the same bytes the slow
// handler (contextHandler over slog.JSONHandler with MaskAttr) writes for it, without slog's
// per-record state, its json.Marshal of every float and the copy of the record that adding
// the context's ids to it costs. Any other record (a group, a LogValuer, a value of another type, a
// non-finite float, a logger with a group open) goes to the slow handler, whose writes share
// this handler's lock. TestLineHandlerWritesWhatSlogWrites holds the two to the same output.
type lineHandler struct {
	level slog.Leveler
	out   *lockedWriter
	// prefix is the attributes of With, masked and written out (`,"service":"chat-mio"`).
	prefix []byte
	// slowOnly is set once With was given a value this handler does not write or a group was
	// opened: every record goes to slow.
	slowOnly bool
	slow     slog.Handler
}

// lockedWriter serialises every write to w, the fast handler's and the slow one's.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func newLineHandler(w io.Writer, level slog.Level) *lineHandler {
	out := &lockedWriter{w: w}
	slow := &contextHandler{next: slog.NewJSONHandler(out, &slog.HandlerOptions{Level: level, ReplaceAttr: MaskAttr})}
	return &lineHandler{level: level, out: out, slow: slow}
}

func (h *lineHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

func (h *lineHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	h2 := *h
	h2.slow = h.slow.WithAttrs(attrs)
	if !h.slowOnly {
		prefix := append([]byte(nil), h.prefix...)
		for _, a := range attrs {
			var ok bool
			if prefix, ok = appendFlatAttr(prefix, a); !ok {
				h2.slowOnly = true
				break
			}
		}
		h2.prefix = prefix
	}
	return &h2
}

func (h *lineHandler) WithGroup(name string) slog.Handler {
	h2 := *h
	h2.slow, h2.slowOnly = h.slow.WithGroup(name), true
	return &h2
}

var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

func (h *lineHandler) Handle(ctx context.Context, r slog.Record) error {
	if h.slowOnly || r.Time.IsZero() {
		return h.slow.Handle(ctx, r)
	}
	t := r.Time.Round(0)
	if y := t.Year(); y < 0 || y >= 10000 {
		return h.slow.Handle(ctx, r)
	}
	bp := linePool.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= 16<<10 {
			linePool.Put(bp)
		}
	}()
	buf := append((*bp)[:0], `{"time":"`...)
	buf = t.AppendFormat(buf, time.RFC3339Nano)
	buf = append(buf, `","level":`...)
	buf = appendJSONString(buf, r.Level.String())
	buf = append(buf, `,"msg":`...)
	buf = appendJSONString(buf, r.Message)
	buf = append(buf, h.prefix...)
	ok, hasJob := true, false
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == jobid.BaggageKey {
			hasJob = true
		}
		buf, ok = appendFlatAttr(buf, a)
		return ok
	})
	if !ok {
		*bp = buf
		return h.slow.Handle(ctx, r)
	}
	if ctx != nil {
		if id := jobid.FromContext(ctx); id != "" && !hasJob {
			if buf, ok = appendFlatAttr(buf, slog.String(jobid.BaggageKey, id)); !ok {
				*bp = buf
				return h.slow.Handle(ctx, r)
			}
		}
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
			// Lower-case hex, as TraceID.String and SpanID.String write it: an id of the suite's
			// own, which the masking leaves alone (ownID).
			tid, sid := sc.TraceID(), sc.SpanID()
			buf = append(buf, `,"trace_id":"`...)
			buf = hex.AppendEncode(buf, tid[:])
			buf = append(buf, `","span_id":"`...)
			buf = hex.AppendEncode(buf, sid[:])
			buf = append(buf, '"')
		}
	}
	buf = append(buf, "}\n"...)
	*bp = buf
	_, err := h.out.Write(buf)
	return err
}

// appendFlatAttr appends `,"key":value` for a as slog.JSONHandler with MaskAttr writes it, and
// reports false (with buf as it came) for an attribute it does not write: an empty key, a group,
// a LogValuer, a value of a type other than Label and error, a float that is not finite, a time
// outside years 0–9999.
func appendFlatAttr(buf []byte, a slog.Attr) ([]byte, bool) {
	// A LogValuer goes to slog's handler, which resolves it (and writes a panic in it with
	// its own stack).
	if k := a.Value.Kind(); a.Key == "" || k == slog.KindGroup || k == slog.KindLogValuer {
		return buf, false
	}
	a = MaskAttr(nil, a)
	v := a.Value.Resolve()
	n := len(buf)
	buf = append(buf, ',')
	buf = appendJSONString(buf, a.Key)
	buf = append(buf, ':')
	switch v.Kind() {
	case slog.KindString:
		buf = appendJSONString(buf, v.String())
	case slog.KindInt64:
		buf = strconv.AppendInt(buf, v.Int64(), 10)
	case slog.KindUint64:
		buf = strconv.AppendUint(buf, v.Uint64(), 10)
	case slog.KindBool:
		buf = strconv.AppendBool(buf, v.Bool())
	case slog.KindDuration:
		buf = strconv.AppendInt(buf, int64(v.Duration()), 10)
	case slog.KindFloat64:
		f := v.Float64()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return buf[:n], false
		}
		buf = appendJSONFloat(buf, f)
	case slog.KindTime:
		t := v.Time()
		if y := t.Year(); y < 0 || y >= 10000 {
			return buf[:n], false
		}
		buf = append(buf, '"')
		buf = t.AppendFormat(buf, time.RFC3339Nano)
		buf = append(buf, '"')
	default:
		return buf[:n], false
	}
	return buf, true
}

// appendJSONFloat writes f as encoding/json does (which slog.JSONHandler calls for a float):
// the shortest decimal that reads back as f, in exponent form below 1e-6 and from 1e21, with
// the exponent's leading zero dropped.
func appendJSONFloat(buf []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	buf = strconv.AppendFloat(buf, f, format, -1, 64)
	if format == 'e' {
		if n := len(buf); n >= 4 && buf[n-4] == 'e' && buf[n-3] == '-' && buf[n-2] == '0' {
			buf[n-2] = buf[n-1]
			buf = buf[:n-1]
		}
	}
	return buf
}

// appendJSONString writes s as a JSON string the way slog.JSONHandler escapes it: quotes,
// backslashes and control characters escaped (\n, \r, \t by name, the rest as \u00xx), invalid
// UTF-8 as \ufffd, U+2028 and U+2029 escaped, HTML characters left as they are.
func appendJSONString(buf []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			buf = append(buf, s[start:i]...)
			switch b {
			case '\\', '"':
				buf = append(buf, '\\', b)
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			buf = append(buf, s[start:i]...)
			buf = append(buf, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}
