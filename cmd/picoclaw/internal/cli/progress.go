package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// progress draws a bar for long work on a terminal (standard error), redrawn in place at most
// ten times a second; on anything else (a pipe, a file, a test) it draws nothing, so logs and
// scripts see only the results.
type progress struct {
	w     io.Writer
	label string
	total int64
	done  int64
	unit  string
	last  time.Time
	drawn bool
	now   func() time.Time
}

// newProgress starts a bar of total units on w when w is a terminal (nil otherwise; a nil
// progress does nothing).
func newProgress(w io.Writer, label string, total int64, unit string) *progress {
	if !isTerminal(w) {
		return nil
	}
	return &progress{w: w, label: label, total: total, unit: unit, now: time.Now}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// Add counts n more units done.
func (p *progress) Add(n int64) {
	if p == nil {
		return
	}
	p.done += n
	if t := p.now(); p.done >= p.total || t.Sub(p.last) >= 100*time.Millisecond {
		p.last = t
		p.draw()
	}
}

// Label changes what the bar says it is doing.
func (p *progress) Label(label string) {
	if p == nil {
		return
	}
	p.label = label
	p.draw()
}

// Done clears the bar.
func (p *progress) Done() {
	if p == nil || !p.drawn {
		return
	}
	fmt.Fprint(p.w, "\r\033[K")
}

func (p *progress) draw() {
	p.drawn = true
	fmt.Fprint(p.w, "\r\033[K"+bar(p.label, p.done, p.total, p.unit, 24))
}

// bar renders "label [#####-----] done/total unit".
func bar(label string, done, total int64, unit string, width int) string {
	if total < 1 {
		total = 1
	}
	done = min(max(done, 0), total)
	filled := int(int64(width) * done / total)
	s := fmt.Sprintf("%s [%s%s] %d/%d", label, strings.Repeat("█", filled), strings.Repeat("░", width-filled), done, total)
	if unit != "" {
		s += " " + unit
	}
	return s
}
