package faults

import (
	"fmt"
	"io"
	"strings"

	"github.com/picoclaw-suite/picoclaw/bench/internal/report"
)

// Failures lists what the run got wrong, one line each (none: it passed).
func (r *Result) Failures() []string {
	t := r.Tally
	var out []string
	add := func(n int, what string) {
		if n > 0 {
			out = append(out, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(t.Lost, "lost")
	add(t.Duplicated, "duplicated")
	add(t.OutOfOrderChats, "chats out of order")
	add(t.ErrorReplies, "error replies")
	add(t.Unexpected, "unexpected messages")
	add(t.Unacked, "messages never acknowledged by the webhook")
	add(len(r.DeadLetters), "dead letters")
	if !r.Settled {
		out = append(out, "queues not settled after the drain")
	}
	return append(out, r.Errors...)
}

// Write saves the result as name.json and name.md in dir.
func (r *Result) Write(dir, name string) error { return report.WriteFiles(dir, name, r, r.Markdown) }

// Markdown writes the human-readable report.
func (r *Result) Markdown(w io.Writer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	t := r.Tally
	p("# PicoClaw Suite fault run")
	p("")
	p("Run %s, commit %s, %d CPUs. %d messages over %d LINE chats at %.1f/s; %d replica(s) of every consumer; Redis and Postgres paused and the LINE API down %.0f s each; a killed service stays down %.0f s; %.0f s between faults. Total %.0f s: faults %.0f s, traffic %.0f s, drain %.0f s.",
		r.StartedAt.Format("2006-01-02 15:04"), orDash(r.Commit), r.CPUs, r.Messages, r.Chats, r.RatePerS, r.Replicas,
		r.PauseSec, r.DownSec, r.GapSec, r.TotalSec, r.ScheduleSec, r.TrafficSec, r.DrainSec)
	p("")
	if f := r.Failures(); len(f) > 0 {
		p("**FAIL**: %s.", strings.Join(f, "; "))
	} else {
		p("**PASS**: every message answered exactly once, in its chat's order, with no error reply and no dead letter.")
	}
	p("")
	p("| count | |")
	p("|---|---:|")
	p("| sent (acknowledged by the webhook) | %d |", t.Sent)
	p("| never acknowledged | %d |", t.Unacked)
	p("| answered | %d |", t.Answered)
	p("| lost | %d |", t.Lost)
	p("| duplicated | %d |", t.Duplicated)
	p("| chats out of order (inversions) | %d (%d) |", t.OutOfOrderChats, t.Inversions)
	p("| error replies | %d |", t.ErrorReplies)
	p("| unexpected messages | %d |", t.Unexpected)
	p("| dead letters | %d |", len(r.DeadLetters))
	p("| answers as reply / as push | %d / %d |", t.Replies, t.Pushes)
	p("| webhook redeliveries | %d |", r.WebhookRetries)
	p("| LINE API requests failed by the outage | %d |", r.LINEFailed)
	p("")
	p("Answer latency (first webhook attempt → answer at the LINE API): p50 %.0f ms, p90 %.0f ms, p99 %.0f ms, max %.0f ms.",
		r.Latency.P50, r.Latency.P90, r.Latency.P99, r.Latency.Max)
	p("")
	p("## Faults")
	p("")
	p("| # | fault | target | replica | lasted (s) | stop (s) | ready (s) | exit | messages sent meanwhile | note |")
	p("|---:|---|---|---:|---:|---:|---:|---|---:|---|")
	for i, f := range r.Faults {
		note := f.Note
		if f.Err != "" {
			note = strings.TrimSpace("**" + f.Err + "** " + note)
		}
		p("| %d | %s | %s | %s | %.1f | %s | %s | %s | %d | %s |", i+1, f.Kind, f.Target, replica(f.Replica), f.Sec,
			secs(f.StopSec), secs(f.ReadySec), orDash(f.Exit), f.Messages, cell(note))
	}
	samples := []struct {
		title string
		lines []string
	}{
		{"Lost (message numbers)", ints(t.LostSample)},
		{"Duplicated (message numbers)", ints(t.DuplicatedSample)},
		{"Out of order (a chat's message places in the order answered)", t.OutOfOrderSample},
		{"Error replies", t.ErrorSample},
		{"Unexpected messages", t.UnexpectedSample},
		{"Protocol problems the fake LINE API saw", r.LINEProblems},
	}
	var dl []string
	for _, d := range r.DeadLetters {
		dl = append(dl, fmt.Sprintf("%s %s %s (%s): %s", d.Gateway, d.Queue, d.EventID, d.Kind, d.Reason))
	}
	samples = append(samples, struct {
		title string
		lines []string
	}{"Dead letters", dl})
	for _, s := range samples {
		if len(s.lines) == 0 {
			continue
		}
		p("")
		p("## %s", s.title)
		p("")
		for _, l := range s.lines {
			p("- %s", cell(l))
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func secs(v float64) string {
	if v == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", v)
}

func replica(n int) string {
	if n == 0 {
		return "–"
	}
	return fmt.Sprint(n)
}

func ints(v []int) []string {
	if len(v) == 0 {
		return nil
	}
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return []string{strings.Join(s, ", ")}
}

// cell keeps a text on one Markdown table line.
func cell(s string) string {
	return strings.NewReplacer("\n", " ⏎ ", "|", "\\|").Replace(s)
}
