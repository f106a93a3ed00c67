package domain

import (
	"strings"
	"unicode"
)

// CommandKind distinguishes route commands from the ones that change the session or the mode.
type CommandKind int

const (
	// CommandRoute selects a route (/chat, /plan, /code2 ...).
	CommandRoute CommandKind = iota + 1
	// CommandLocal and CommandCloud toggle the session's local_only flag (chat-mio stores it).
	CommandLocal
	CommandCloud
	// CommandDeliberate asks every enabled order in parallel (SPEC §7).
	CommandDeliberate
)

// Command is an explicit command at the start of a message.
type Command struct {
	Kind CommandKind
	// Name is the command as the user typed it, lower-cased, with its slash ("/order1").
	Name  string
	Route Route
	// Text is the message without the command.
	Text string
}

// commandRoute maps a command word to its route; order1..3 and the legacy coder1..3 are
// aliases of code1..3.
func commandRoute(word string) (Route, bool) {
	switch word {
	case "chat":
		return RouteChat, true
	case "plan":
		return RoutePlan, true
	case "analyze":
		return RouteAnalyze, true
	case "ops":
		return RouteOps, true
	case "research":
		return RouteResearch, true
	case "code":
		return RouteCode, true
	case "code1", "order1", "coder1":
		return RouteCode1, true
	case "code2", "order2", "coder2":
		return RouteCode2, true
	case "code3", "order3", "coder3":
		return RouteCode3, true
	}
	return "", false
}

// ParseCommand recognises a command only at the very start of the message (after leading
// whitespace). The full-width slash (／) that Japanese keyboards produce is accepted too. A word
// that merely starts like a command (/codex) is not a command.
func ParseCommand(text string) (Command, bool) {
	s := strings.TrimLeftFunc(text, unicode.IsSpace)
	switch {
	case strings.HasPrefix(s, "/"):
		s = s[1:]
	case strings.HasPrefix(s, "／"):
		s = s[len("／"):]
	default:
		return Command{}, false
	}
	end := strings.IndexFunc(s, unicode.IsSpace)
	word, rest := s, ""
	if end >= 0 {
		word, rest = s[:end], s[end:]
	}
	word = strings.ToLower(word)
	rest = strings.TrimSpace(rest)
	cmd := Command{Name: "/" + word, Text: rest}
	switch word {
	case "local":
		cmd.Kind, cmd.Route = CommandLocal, RouteChat
	case "cloud":
		cmd.Kind, cmd.Route = CommandCloud, RouteChat
	case "deliberate":
		cmd.Kind, cmd.Route = CommandDeliberate, RouteCode
	default:
		r, ok := commandRoute(word)
		if !ok {
			return Command{}, false
		}
		cmd.Kind, cmd.Route = CommandRoute, r
	}
	return cmd, true
}
