package domain

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
)

// CommandKind names a command chat-mio handles itself.
type CommandKind int

// Commands of SPEC §10.
const (
	CmdNone CommandKind = iota
	CmdApprove
	CmdDeny
	CmdAutoApproveOn
	CmdAutoApproveOff
	CmdAutoApproveStatus
	CmdPick
	CmdStatus
	CmdLocal
	CmdCloud
	CmdHelp
	// CmdRetry asks the order of an earlier coder job again, with the workspace as it is now.
	CmdRetry
	// CmdForget clears the chat's short memory and the note kept from the day before.
	CmdForget
)

// Command is a parsed command.
type Command struct {
	Kind   CommandKind
	JobID  string
	Reason string
	// Similar: /approve <job> similar [30m] also allows similar jobs for SimilarTTL (zero: the
	// approval service's default, 30m).
	Similar    bool
	SimilarTTL time.Duration
	// Pick is the 1-based proposal number of /pick.
	Pick int
	Auto AutoApproveOptions
	// Name is the command word as typed, for usage texts.
	Name string
}

// AutoApproveOptions are the options of /auto-approve on (SPEC §6).
type AutoApproveOptions struct {
	// TTL zero means the approval service's default TTL.
	TTL       time.Duration
	Paths     []string
	TaskTypes []string // design, codegen, review, refactor, ops, docs
	Routes    []string // CHAT ... CODE3
	// Ops opt in to operations a grant never covers otherwise: "shell" (needs paths= too).
	Ops []string
}

// routerCommands are routing commands of SPEC §4 that router-shiro interprets.
var routerCommands = map[string]bool{
	"/chat": true, "/plan": true, "/analyze": true, "/ops": true, "/research": true,
	"/code": true, "/code1": true, "/code2": true, "/code3": true,
	"/order1": true, "/order2": true, "/order3": true,
	"/coder1": true, "/coder2": true, "/coder3": true,
	"/deliberate": true,
}

// RetryText is the message /retry sends for a request: the original text without its
// routing command, addressed to the order that answered (or, when none did, to the route).
func RetryText(text, order, route string) string {
	fields := strings.Fields(text)
	if len(fields) > 0 && routerCommands[strings.ToLower(fields[0])] {
		text = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), fields[0]))
	}
	target := strings.ToLower(order)
	if !routerCommands["/"+target] {
		target = strings.ToLower(route)
	}
	if !routerCommands["/"+target] {
		target = "code"
	}
	return "/" + target + " " + text
}

// TaskTypes accepted by tasks=.
var TaskTypes = []string{"design", "codegen", "review", "refactor", "ops", "docs"}

// GrantOps accepted by ops=.
var GrantOps = []string{"shell"}

// Routes accepted by routes=.
var Routes = []string{"CHAT", "PLAN", "ANALYZE", "OPS", "RESEARCH", "CODE", "CODE1", "CODE2", "CODE3"}

// ParseCommand recognises a command at the start of text. It returns CmdNone for ordinary text
// and for router commands; an unknown command or wrong arguments give an error wrapping ErrUsage
// with Command.Name set so the caller can show the right usage.
func ParseCommand(text string) (Command, error) {
	fields := strings.Fields(text)
	if len(fields) == 0 || !strings.HasPrefix(fields[0], "/") {
		return Command{}, nil
	}
	name := strings.ToLower(fields[0])
	args := fields[1:]
	if routerCommands[name] {
		return Command{}, nil
	}
	c := Command{Name: name}
	usage := func(format string, a ...any) (Command, error) {
		return c, fmt.Errorf("%w: %s: %s", ErrUsage, name, fmt.Sprintf(format, a...))
	}
	switch name {
	case "/approve":
		if len(args) < 1 || len(args) > 3 {
			return usage("want one job id, optionally followed by similar and a time (similar 30m)")
		}
		id, err := jobid.Normalize(args[0])
		if err != nil {
			return usage("%v", err)
		}
		c.Kind, c.JobID = CmdApprove, id
		if len(args) > 1 {
			if !strings.EqualFold(args[1], "similar") {
				return usage("after the job id only similar [time] is understood, got %q", args[1])
			}
			c.Similar = true
			if len(args) == 3 {
				d, err := time.ParseDuration(strings.ToLower(args[2]))
				if err != nil || d < time.Minute || d > 24*time.Hour {
					return usage("similar: the time must be 1m..24h (e.g. 30m, 2h), got %q", args[2])
				}
				c.SimilarTTL = d
			}
		}
	case "/deny":
		if len(args) < 1 {
			return usage("want a job id")
		}
		id, err := jobid.Normalize(args[0])
		if err != nil {
			return usage("%v", err)
		}
		c.Kind, c.JobID = CmdDeny, id
		c.Reason = reasonAfter(text, 2)
	case "/retry":
		if len(args) != 1 {
			return usage("want one job id")
		}
		id, err := jobid.Normalize(args[0])
		if err != nil {
			return usage("%v", err)
		}
		c.Kind, c.JobID = CmdRetry, id
	case "/pick":
		if len(args) != 2 {
			return usage("want a job id and a number")
		}
		id, err := jobid.Normalize(args[0])
		if err != nil {
			return usage("%v", err)
		}
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 1 || n > 9 {
			return usage("number must be 1..9, got %q", args[1])
		}
		c.Kind, c.JobID, c.Pick = CmdPick, id, n
	case "/auto-approve", "/autoapprove", "/auto_approve":
		c.Name = "/auto-approve"
		return parseAutoApprove(c, args)
	case "/status", "/local", "/cloud", "/help", "/forget":
		if len(args) != 0 {
			return usage("takes no arguments")
		}
		c.Kind = map[string]CommandKind{"/status": CmdStatus, "/local": CmdLocal, "/cloud": CmdCloud, "/help": CmdHelp, "/forget": CmdForget}[name]
	default:
		c.Name = ""
		return usage("unknown command")
	}
	return c, nil
}

// reasonAfter returns text after the first n fields, keeping its inner spacing.
func reasonAfter(text string, n int) string {
	s := strings.TrimSpace(text)
	for i := 0; i < n; i++ {
		idx := strings.IndexAny(s, " \t\r\n")
		if idx < 0 {
			return ""
		}
		s = strings.TrimSpace(s[idx:])
	}
	return s
}

func parseAutoApprove(c Command, args []string) (Command, error) {
	usage := func(format string, a ...any) (Command, error) {
		return c, fmt.Errorf("%w: /auto-approve: %s", ErrUsage, fmt.Sprintf(format, a...))
	}
	if len(args) == 0 {
		return usage("want on, off or status")
	}
	switch strings.ToLower(args[0]) {
	case "off":
		if len(args) != 1 {
			return usage("off takes no options")
		}
		c.Kind = CmdAutoApproveOff
		return c, nil
	case "status":
		if len(args) != 1 {
			return usage("status takes no options")
		}
		c.Kind = CmdAutoApproveStatus
		return c, nil
	case "on":
	default:
		return usage("want on, off or status, got %q", args[0])
	}
	c.Kind = CmdAutoApproveOn
	seen := map[string]bool{}
	for _, opt := range args[1:] {
		key, val, ok := strings.Cut(opt, "=")
		key = strings.ToLower(key)
		if !ok || val == "" {
			return usage("option %q must be key=value", opt)
		}
		if seen[key] {
			return usage("option %s given twice", key)
		}
		seen[key] = true
		switch key {
		case "ttl":
			d, err := time.ParseDuration(val)
			if err != nil || d <= 0 {
				return usage("ttl must be a positive duration like 30m, got %q", val)
			}
			c.Auto.TTL = d
		case "paths":
			for _, p := range splitList(val) {
				if strings.Contains(p, "\x00") {
					return usage("invalid path %q", p)
				}
				c.Auto.Paths = append(c.Auto.Paths, p)
			}
		case "tasks":
			for _, t := range splitList(val) {
				t = strings.ToLower(t)
				if !contains(TaskTypes, t) {
					return usage("unknown task type %q (want %s)", t, strings.Join(TaskTypes, ","))
				}
				c.Auto.TaskTypes = append(c.Auto.TaskTypes, t)
			}
		case "routes":
			for _, r := range splitList(val) {
				route, ok := NormalizeRoute(r)
				if !ok {
					return usage("unknown route %q (want %s)", r, strings.Join(Routes, ","))
				}
				c.Auto.Routes = append(c.Auto.Routes, route)
			}
		case "ops":
			for _, o := range splitList(val) {
				o = strings.ToLower(o)
				if !contains(GrantOps, o) {
					return usage("unknown operation %q (want %s)", o, strings.Join(GrantOps, ","))
				}
				c.Auto.Ops = append(c.Auto.Ops, o)
			}
		default:
			return usage("unknown option %q (ttl=, paths=, tasks=, routes=, ops=)", key)
		}
	}
	return c, nil
}

// NormalizeRoute accepts a route name case-insensitively, with the order and legacy coder aliases.
func NormalizeRoute(s string) (string, bool) {
	u := strings.ToUpper(strings.TrimSpace(s))
	switch u {
	case "ORDER1", "CODER1":
		return "CODE1", true
	case "ORDER2", "CODER2":
		return "CODE2", true
	case "ORDER3", "CODER3":
		return "CODE3", true
	}
	return u, contains(Routes, u)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
