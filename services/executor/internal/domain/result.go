package domain

import (
	"fmt"
	"strings"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
)

// CommandResult is the outcome of one operation.
type CommandResult struct {
	Index   int
	Type    string
	Action  string
	Target  string
	Success bool
	Skipped bool
	Output  string
	// Error is what went wrong, in English (logs, the audit log); ErrorCode and ErrorArgs are
	// its message in Texts, which the result text says in the user's language.
	Error           string
	ErrorCode       string   `json:",omitempty"`
	ErrorArgs       []string `json:",omitempty"`
	Duration        time.Duration
	OutputTruncated bool
	// Sandbox says how a shell or git command ran: "namespaces+landlock" or "none"; empty for
	// operations that start no process.
	Sandbox string
	// ExitReason is exit, timeout, signal, limit, cancelled, sandbox_unavailable or
	// not_started; ExitCode is the command's status (-1 when it has none) and Signal the
	// signal that ended it.
	ExitReason string
	ExitCode   int
	Signal     string
}

// Result is the outcome of a job (SPEC §8).
type Result struct {
	JobID         string
	Success       bool
	Executed      int
	Succeeded     int
	Failed        int
	Skipped       int
	Commands      []CommandResult
	CommitHash    string
	CommitError   string
	CommitFailure Failure `json:",omitzero"`
	DryRun        bool
	RolledBack    bool
	RestoredPaths []string
	RollbackError string
	// RollbackFailure is RollbackError's message (as CommandResult.ErrorCode).
	RollbackFailure Failure `json:",omitzero"`
	StartedAt       time.Time
	FinishedAt      time.Time
	// Images are the screenshots the job took, for the user to see (each also kept as an
	// artifact, which the journal and the command output name; the bytes are not recorded).
	Images []Image `json:"-"`
}

// Limits of the screenshots a result carries back, all together (a further one is named by
// its artifact in the command output only): the result goes on to chat in a pushed message,
// and the services take requests of at most 1 MiB.
const (
	MaxResultImages     = 4
	MaxResultImageBytes = 768 << 10
)

// Image is a picture a job produced.
type Image struct {
	MIMEType string
	Data     []byte
	// Artifact is where the job keeps it; Caption says what it shows (the page).
	Artifact string
	Caption  string
}

// AddImage keeps img for the user when it is a PNG or JPEG and the result's images stay within
// the limits.
func (r *Result) AddImage(img Image) bool {
	total := len(img.Data)
	for _, im := range r.Images {
		total += len(im.Data)
	}
	if (img.MIMEType != "image/png" && img.MIMEType != "image/jpeg") || len(img.Data) == 0 ||
		total > MaxResultImageBytes || len(r.Images) >= MaxResultImages {
		return false
	}
	r.Images = append(r.Images, img)
	return true
}

// Failure is the message (Texts) of a failure a result records.
type Failure struct {
	Code string   `json:",omitempty"`
	Args []string `json:",omitempty"`
}

// FailureOf is err's message, or none when it has none.
func FailureOf(err error) Failure {
	if m := fault.MessageOf(err); m != nil {
		return Failure{Code: m.Code, Args: m.Args}
	}
	return Failure{}
}

// text says f in l; a failure without a message (a record from before messages, an unexpected
// error) is UNEXPECTED: its English words are for the log.
func (f Failure) text(l Locale) string {
	if f.Code == "" {
		return Texts.Text(string(l), CodeUnexpected)
	}
	return Texts.Text(string(l), f.Code, f.Args...)
}

// Fail records err as the command's failure: its English text and its message.
func (c *CommandResult) Fail(err error) {
	f := FailureOf(err)
	c.Error, c.ErrorCode, c.ErrorArgs = err.Error(), f.Code, f.Args
}

// Tally recomputes the counters and success from Commands.
func (r *Result) Tally() {
	r.Executed, r.Succeeded, r.Failed, r.Skipped = 0, 0, 0, 0
	for _, c := range r.Commands {
		switch {
		case c.Skipped:
			r.Skipped++
		case c.Success:
			r.Executed++
			r.Succeeded++
		default:
			r.Executed++
			r.Failed++
		}
	}
	r.Success = r.Failed == 0 && r.Skipped == 0
}

// Locale is the language of user-facing text.
type Locale string

const (
	LocaleJA Locale = "ja"
	LocaleEN Locale = "en"
)

// ParseLocale maps a request's locale to a supported one; anything but "en" is Japanese.
func ParseLocale(s, fallback string) Locale {
	if s == "" {
		s = fallback
	}
	if strings.EqualFold(strings.TrimSpace(s), "en") {
		return LocaleEN
	}
	return LocaleJA
}

// Summary is the one-line count summary: 実行: N 件, 成功: N 件, 失敗: N 件.
func (r *Result) Summary(l Locale) string {
	var s string
	if l == LocaleEN {
		s = fmt.Sprintf("Executed: %d, succeeded: %d, failed: %d", r.Executed, r.Succeeded, r.Failed)
		if r.Skipped > 0 {
			s += fmt.Sprintf(", skipped: %d", r.Skipped)
		}
		return s
	}
	s = fmt.Sprintf("実行: %d 件, 成功: %d 件, 失敗: %d 件", r.Executed, r.Succeeded, r.Failed)
	if r.Skipped > 0 {
		s += fmt.Sprintf(", スキップ: %d 件", r.Skipped)
	}
	return s
}

// maxTextOutput bounds the command output quoted in chat text; the full (capped) output stays
// in the structured result.
const maxTextOutput = 400

// Text is the result message for chat.
func (r *Result) Text(l Locale) string {
	en := l == LocaleEN
	var b strings.Builder
	switch {
	case r.DryRun && en:
		b.WriteString("Dry run (nothing was changed)")
	case r.DryRun:
		b.WriteString("ドライラン（何も変更していません）")
	case r.Success && en:
		b.WriteString("Execution completed")
	case r.Success:
		b.WriteString("実行完了")
	case en:
		b.WriteString("Execution failed")
	default:
		b.WriteString("実行に失敗しました")
	}
	if r.JobID != "" {
		b.WriteString(" [" + r.JobID + "]")
	}
	b.WriteString("\n" + r.Summary(l) + "\n")
	for i, c := range r.Commands {
		mark := "✓"
		if c.Skipped {
			mark = "-"
		} else if !c.Success {
			mark = "✗"
		}
		fmt.Fprintf(&b, "%s [%d] %s %s %s (%dms)", mark, i+1, c.Type, c.Action, oneLine(c.Target, 80), c.Duration.Milliseconds())
		if c.Skipped {
			if en {
				b.WriteString(" skipped")
			} else {
				b.WriteString(" スキップ")
			}
		}
		b.WriteString("\n")
		if c.Error != "" {
			if en {
				b.WriteString("    error: ")
			} else {
				b.WriteString("    エラー: ")
			}
			b.WriteString(oneLine(Failure{Code: c.ErrorCode, Args: c.ErrorArgs}.text(l), maxTextOutput) + "\n")
		}
		if c.OutputTruncated {
			if en {
				b.WriteString("    (output was cut at the size limit)\n")
			} else {
				b.WriteString("    （出力は上限で切り詰められました）\n")
			}
		}
	}
	if r.RolledBack {
		if en {
			fmt.Fprintf(&b, "Rolled back: %s\n", joinOrNone(r.RestoredPaths, "none"))
		} else {
			fmt.Fprintf(&b, "ロールバック済み: %s\n", joinOrNone(r.RestoredPaths, "なし"))
		}
	}
	if r.RollbackError != "" {
		if en {
			b.WriteString("Rollback error: " + oneLine(r.RollbackFailure.text(l), maxTextOutput) + "\n")
		} else {
			b.WriteString("ロールバックエラー: " + oneLine(r.RollbackFailure.text(l), maxTextOutput) + "\n")
		}
	}
	if r.CommitHash != "" {
		if en {
			b.WriteString("Git commit: " + r.CommitHash + "\n")
		} else {
			b.WriteString("Git コミット: " + r.CommitHash + "\n")
		}
	}
	if r.CommitError != "" {
		if en {
			b.WriteString("Auto-commit failed: " + oneLine(r.CommitFailure.text(l), maxTextOutput) + "\n")
		} else {
			b.WriteString("自動コミットに失敗しました: " + oneLine(r.CommitFailure.text(l), maxTextOutput) + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func joinOrNone(s []string, none string) string {
	if len(s) == 0 {
		return none
	}
	return strings.Join(s, ", ")
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "…"
	}
	return s
}
