package domain

import (
	"fmt"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
)

// Limits of the changed lines an approval message shows.
const (
	changeLinesMax   = 24
	changeLineRunes  = 110
	changeFilesShown = 6
)

type changeTexts struct {
	title, created, deleted, renamed, whole, more, moreFiles string
}

var changesJA = changeTexts{
	title: "変更内容", created: "（新規ファイル）", deleted: "（ファイルを削除）", renamed: "（%s に名前を変更）",
	whole: "⚠️ ファイル全体を置き換えます（今の内容との差分は出せません。今ある行はすべて消えます）",
	more:  "  … ほか %d 行（全体はコンソールで確認できます）", moreFiles: "  … ほか %d ファイル",
}

var changesEN = changeTexts{
	title: "Changes", created: "(new file)", deleted: "(file deleted)", renamed: "(renamed to %s)",
	whole: "⚠️ Replaces the whole file (no diff against its current content is available; every current line goes)",
	more:  "  … %d more lines (the console shows everything)", moreFiles: "  … %d more files",
}

// ChangeLines is the changed lines of the patch's file operations for the approval message:
// per file its path, then its removed (-) and added (+) lines, within a fixed budget. A
// whole-file update whose current content is unknown says so instead of passing as additions.
func ChangeLines(p *patch.Patch, locale string) string {
	t := changesJA
	if strings.HasPrefix(strings.ToLower(locale), "en") {
		t = changesEN
	}
	var b strings.Builder
	budget, files, hidden := changeLinesMax, 0, 0
	emit := func(prefix string, lines []string) {
		for _, l := range lines {
			if budget == 0 {
				hidden++
				continue
			}
			b.WriteString("  " + prefix + SafeText(l, changeLineRunes) + "\n")
			budget--
		}
	}
	skipped := 0
	for _, op := range p.Operations {
		if op.Type != patch.TypeFileEdit {
			continue
		}
		if files == changeFilesShown {
			skipped++
			continue
		}
		files++
		head := SafeText(op.Target, 100)
		switch op.Action {
		case patch.ActionCreate:
			fmt.Fprintf(&b, "%s %s\n", head, t.created)
			emit("+", contentLines(op.Content))
		case patch.ActionAppend:
			fmt.Fprintf(&b, "%s\n", head)
			emit("+", contentLines(op.Content))
		case patch.ActionUpdate:
			fmt.Fprintf(&b, "%s\n  %s\n", head, t.whole)
			emit("+", contentLines(op.Content))
		case patch.ActionDelete:
			fmt.Fprintf(&b, "%s %s\n", head, t.deleted)
		case patch.ActionRename:
			fmt.Fprintf(&b, "%s "+t.renamed+"\n", head, SafeText(op.Metadata[patch.MetaTo], 100))
		case patch.ActionPatch:
			fmt.Fprintf(&b, "%s\n", head)
			var lines []string
			for _, l := range strings.Split(op.Content, "\n") {
				switch {
				case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "):
				case strings.HasPrefix(l, "+"), strings.HasPrefix(l, "-"):
					lines = append(lines, l)
				}
			}
			for _, l := range lines {
				emit(l[:1], []string{l[1:]})
			}
		}
	}
	if files == 0 {
		return ""
	}
	if hidden > 0 {
		fmt.Fprintf(&b, t.more+"\n", hidden)
	}
	if skipped > 0 {
		fmt.Fprintf(&b, t.moreFiles+"\n", skipped)
	}
	return t.title + ":\n" + b.String()
}

func contentLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
