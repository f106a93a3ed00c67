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

// FileChange is one changed file as an approval message shows it: its path (defused), a note
// when the change is not a diff, and its removed (-) and added (+) lines.
type FileChange struct {
	Path  string
	Note  string
	Lines []string
	// More is set on the last file shown when lines were cut.
	More string
}

// Changes is the changed files of the patch's file operations for the approval message, within
// a fixed budget of lines and files: the files shown, and a closing line when lines or files
// were left out. A whole-file update whose current content is unknown says so instead of
// passing as additions.
func Changes(p *patch.Patch, locale string) (files []FileChange, more []string) {
	t := changesJA
	if strings.HasPrefix(strings.ToLower(locale), "en") {
		t = changesEN
	}
	budget, hidden, skipped := changeLinesMax, 0, 0
	for _, op := range p.Operations {
		if op.Type != patch.TypeFileEdit {
			continue
		}
		if len(files) == changeFilesShown {
			skipped++
			continue
		}
		f := FileChange{Path: SafeText(op.Target, 100)}
		emit := func(prefix string, lines []string) {
			for _, l := range lines {
				if budget == 0 {
					hidden++
					continue
				}
				f.Lines = append(f.Lines, prefix+SafeText(l, changeLineRunes))
				budget--
			}
		}
		switch op.Action {
		case patch.ActionCreate:
			f.Note = t.created
			emit("+", contentLines(op.Content))
		case patch.ActionAppend:
			emit("+", contentLines(op.Content))
		case patch.ActionUpdate:
			f.Note = t.whole
			emit("+", contentLines(op.Content))
		case patch.ActionDelete:
			f.Note = t.deleted
		case patch.ActionRename:
			f.Note = fmt.Sprintf(t.renamed, SafeText(op.Metadata[patch.MetaTo], 100))
		case patch.ActionPatch:
			for _, l := range strings.Split(op.Content, "\n") {
				switch {
				case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "):
				case strings.HasPrefix(l, "+"), strings.HasPrefix(l, "-"):
					emit(l[:1], []string{l[1:]})
				}
			}
		}
		files = append(files, f)
	}
	if hidden > 0 {
		more = append(more, strings.TrimSpace(fmt.Sprintf(t.more, hidden)))
	}
	if skipped > 0 {
		more = append(more, strings.TrimSpace(fmt.Sprintf(t.moreFiles, skipped)))
	}
	return files, more
}

// ChangeLines is the changed lines of the patch's file operations for the approval message:
// per file its path, then its removed (-) and added (+) lines, within a fixed budget (Changes).
func ChangeLines(p *patch.Patch, locale string) string {
	t := changesJA
	if strings.HasPrefix(strings.ToLower(locale), "en") {
		t = changesEN
	}
	files, more := Changes(p, locale)
	if len(files) == 0 {
		return ""
	}
	var b strings.Builder
	for _, f := range files {
		switch {
		case f.Note == "":
			b.WriteString(f.Path + "\n")
		case strings.HasPrefix(f.Note, "⚠️"):
			b.WriteString(f.Path + "\n  " + f.Note + "\n")
		default:
			b.WriteString(f.Path + " " + f.Note + "\n")
		}
		for _, l := range f.Lines {
			b.WriteString("  " + l + "\n")
		}
	}
	for _, m := range more {
		b.WriteString("  " + m + "\n")
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
