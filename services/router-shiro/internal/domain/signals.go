package domain

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Cheap signals: a message that no command or rule claimed is conversation when it is short
// and carries nothing that asks for work — no code, no URL, no file name, no request phrasing.
// Deciding it here saves the classifier's whole inference before the chat model's; anything
// in doubt still goes to the classifier.
const (
	// signalShortRunes is a short message: one or two sentences of conversation.
	signalShortRunes = 120
	// signalFollowUpRunes is the longer bound for a message that continues a CHAT session.
	signalFollowUpRunes = 400
	signalMaxLines      = 3
)

var (
	// workMarkers are what code, paths, URLs and commands look like. Each of its alternatives
	// holds one of workMarkerBytes, so a text without any of them (most conversation) is not run
	// through it.
	workMarkers = regexp.MustCompile("`|https?://|www\\.|[{};<>]|\\$\\(|" +
		`\b[\w-]+\.(?:go|py|js|ts|tsx|jsx|rs|java|kt|rb|php|c|cc|cpp|h|hpp|cs|swift|sh|sql|md|ya?ml|json|toml|ini|conf|html|css|txt|log|csv)\b|` +
		`(?:^|\s)(?:\.{0,2}/|~/)[\w.-]+/|\b[\w-]+/[\w.-]+/`)
	// requestEn is an English imperative or a polite request. Each of its alternatives holds a
	// Latin letter (see latin).
	requestEn = regexp.MustCompile(`(?i)^\s*(please\s+)?(fix|add|write|create|make|implement|refactor|update|change|delete|remove|rename|move|run|build|test|check|analy[sz]e|investigate|research|plan|review|compare|summari[sz]e|explain|generate|convert|translate|find|list|set|install|configure|migrate|optimi[sz]e|debug)\b|\b(can|could|would|will) you\b|\bplease\b`)
)

const workMarkerBytes = "`/.{};<>$"

// requestJa is Japanese request phrasing: "…して", "…てください", "…作って", "…お願い".
var requestJa = []string{"して", "てください", "て下さい", "てほしい", "て欲しい", "ってくれ", "お願い", "頼む", "作って",
	"書いて", "直して", "変えて", "消して", "追加", "作成", "削除", "変更", "修正", "実行", "設定して", "まとめて", "教えてください"}

// asksForWork reports whether t has a work marker or request phrasing. The patterns run only on
// a text that can match them: a regular expression scans the whole text for each, a byte search
// far faster.
func asksForWork(t string) bool {
	if strings.ContainsAny(t, workMarkerBytes) && workMarkers.MatchString(t) {
		return true
	}
	for _, p := range requestJa {
		if strings.Contains(t, p) {
			return true
		}
	}
	return latin(t) && requestEn.MatchString(t)
}

// latin reports whether t holds a letter that requestEn's case-insensitive words can match:
// an ASCII letter, or the long s and the Kelvin sign, which fold to s and k.
func latin(t string) bool {
	for i := 0; i < len(t); i++ {
		if c := t[i] | 0x20; 'a' <= c && c <= 'z' {
			return true
		}
	}
	return strings.Contains(t, "\u017f") || strings.Contains(t, "\u212a")
}

// Signals decides CHAT for a message that is plainly conversation; ok is false when the text
// might ask for work and the classifier should look at it. prev is the session's previous
// route: a CHAT conversation keeps going with longer messages too.
func Signals(text string, prev Route) (Decision, bool) {
	t := strings.TrimSpace(text)
	if t == "" {
		return Decision{}, false
	}
	limit := signalShortRunes
	evidence := []string{"short"}
	if prev == RouteChat {
		limit = signalFollowUpRunes
		evidence = []string{"follows a chat"}
	}
	if utf8.RuneCountInString(t) > limit || strings.Count(t, "\n")+1 > signalMaxLines {
		return Decision{}, false
	}
	if asksForWork(t) {
		return Decision{}, false
	}
	return Decision{Route: RouteChat, Source: SourceSignals, Confidence: 0.8,
		Reason:   "conversation: a short message without code, URL, file name or request",
		Evidence: append(evidence, "no code, URL or request"), Matched: "signals"}, true
}
