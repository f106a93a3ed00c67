package telemetry

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/redact"
)

// NewLogger returns a JSON slog logger whose records carry job_id (from baggage) and trace_id /
// span_id (from the active span), with secrets masked.
func NewLogger(w io.Writer, level string, service string) *slog.Logger {
	var lv slog.Level
	switch strings.ToLower(level) {
	case "debug":
		lv = slog.LevelDebug
	case "warn":
		lv = slog.LevelWarn
	case "error":
		lv = slog.LevelError
	default:
		lv = slog.LevelInfo
	}
	l := slog.New(newLineHandler(w, lv))
	if service != "" {
		l = l.With(slog.String("service", service))
	}
	return l
}

// MaskAttr masks attributes whose key names a secret and credentials inside string values.
func MaskAttr(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.MessageKey || a.Key == slog.TimeKey || a.Key == slog.LevelKey {
		return a
	}
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		s := v.String()
		if ownID(a.Key, s) {
			return a
		}
		if s != "" && redact.IsSecretKey(a.Key) {
			return slog.String(a.Key, redact.Mask)
		}
		if m := redact.Secrets(s); m != s {
			return slog.String(a.Key, m)
		}
	case slog.KindAny:
		switch x := v.Any().(type) {
		case Label:
			// Written as the plain string it is: no secret search, no reflection.
			return slog.String(a.Key, string(x))
		case error:
			return slog.String(a.Key, redact.Secrets(x.Error()))
		}
	}
	return a
}

// ownID reports whether s, logged under key, is an id the suite makes itself (a trace or span id
// as Handle adds it, a valid JobID), which holds nothing to mask: the masking is not searched for.
func ownID(key, s string) bool {
	switch key {
	case "trace_id":
		return len(s) == 32 && lowerHex(s)
	case "span_id":
		return len(s) == 16 && lowerHex(s)
	case jobid.BaggageKey:
		return jobid.Valid(s)
	}
	return false
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Label is a log value from a closed set (routes, sources, rule names, validated ids): written
// as a JSON string, and, not being free text, not searched for secrets. Log it with slog.Any.
type Label string

// MarshalJSON writes a Label as a JSON string where a handler without MaskAttr meets it.
func (l Label) MarshalJSON() ([]byte, error) { return json.Marshal(string(l)) }

type contextHandler struct {
	next slog.Handler
}

func (h *contextHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h *contextHandler) Handle(ctx context.Context, r slog.Record) error {
	if ctx != nil {
		has := false
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == jobid.BaggageKey {
				has = true
				return false
			}
			return true
		})
		if id := jobid.FromContext(ctx); id != "" && !has {
			r.AddAttrs(slog.String(jobid.BaggageKey, id))
		}
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
			r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
		}
	}
	return h.next.Handle(ctx, r)
}

func (h *contextHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &contextHandler{next: h.next.WithAttrs(attrs)}
}

func (h *contextHandler) WithGroup(name string) slog.Handler {
	return &contextHandler{next: h.next.WithGroup(name)}
}
