package chatlinktest

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"

	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
)

// CardCase is an approval request as chat-mio sends it with its card, for the gateways'
// golden tests.
type CardCase struct {
	Name  string
	Reply chatlink.Reply
}

// ApprovalCards are the cases every gateway renders: two files changed, a long diff cut, each
// in Japanese and English, with and without a console link, and model text that tries to ping
// everyone or inject a link.
func ApprovalCards() []CardCase {
	mk := func(locale, job string, console bool, files []chatlink.FileChange, summary ...string) chatlink.Reply {
		en := locale == "en"
		title, risk, expires, stats := "🔐 承認リクエスト "+job, "リスク: 中", "有効期限: 2026-11-21 10:30 JST", "差分: %d ファイル, +%d -%d"
		approve, deny, similar := "承認", "却下", "承認+同種も"
		if en {
			title, risk, expires, stats = "🔐 Approval request "+job, "Risk: medium", "Expires: 2026-11-21 10:30 JST", "Diff: %d files, +%d -%d"
			approve, deny, similar = "Approve", "Deny", "Approve + similar"
		}
		add, del := 0, 0
		for _, f := range files {
			for _, l := range f.Lines {
				if strings.HasPrefix(l, "+") {
					add++
				} else {
					del++
				}
			}
		}
		card := &chatlink.ApprovalCard{JobID: job, Title: title, Risk: "medium", RiskText: risk, Summary: summary, Files: files,
			Facts: []string{fmt.Sprintf(stats, len(files), add, del), expires}, Locale: locale}
		if console {
			card.ConsoleURL = "https://picoclaw.example/ui/#/jobs/" + job
		}
		text := title + "\n" + strings.Join(summary, "\n") + "\n" + risk + "\n/approve " + job + "\n/deny " + job
		return chatlink.Reply{Text: text, JobID: job, Approval: card, Actions: []chatlink.Action{
			{Kind: chatlink.ActionApprove, JobID: job, Label: approve},
			{Kind: chatlink.ActionDeny, JobID: job, Label: deny},
			{Kind: chatlink.ActionApproveSimilar, JobID: job, Value: "30m", Label: similar},
		}}
	}
	two := []chatlink.FileChange{
		{Path: "src/app.go", Lines: []string{"-\treturn nil", "+\treturn fmt.Errorf(\"load %s: %w\", name, err)"}},
		{Path: "docs/README.md", Note: "（新規ファイル）", Lines: []string{"+# Tools", "+Use `make test` & check <output>."}},
	}
	twoEN := []chatlink.FileChange{two[0], {Path: "docs/README.md", Note: "(new file)", Lines: two[1].Lines}}
	var long []string
	for i := range 24 {
		long = append(long, fmt.Sprintf("+line %02d: %s", i, strings.Repeat("x", 100)))
	}
	longFiles := []chatlink.FileChange{{Path: "gen/big.go", Lines: long, More: "… 176 more lines (the console shows everything)"}}
	return []CardCase{
		{"two_files_ja_console", mk("ja", "job_20261121_001", true, two, "設定の読み込みエラーに名前を付ける", "README を追加")},
		{"two_files_ja", mk("ja", "job_20261121_002", false, two, "設定の読み込みエラーに名前を付ける")},
		{"two_files_en_console", mk("en", "job_20261121_003", true, twoEN, "Name the config load error", "Add a README")},
		{"long_diff_en", mk("en", "job_20261121_004", false, longFiles, "Regenerate the big file")},
		{"long_diff_ja_console", mk("ja", "job_20261121_005", true, longFiles, "大きなファイルを再生成")},
		{"injection_en", mk("en", "job_20261121_006", false, two, "<!channel> ping & <https://evil.example|click here>", "*bold* _it_ `code` ```fence```")},
	}
}

// ReplyProto is r as chat-mio sends it.
func ReplyProto(r chatlink.Reply) *commonv1.ReplyMessage {
	m := &commonv1.ReplyMessage{Text: r.Text, JobId: r.JobID}
	for _, a := range r.Actions {
		m.Actions = append(m.Actions, chatlink.ActionToProto(a))
		m.Actions[len(m.Actions)-1].Label = a.Label
	}
	if c := r.Approval; c != nil {
		pc := &commonv1.ApprovalCard{JobId: c.JobID, Title: c.Title, Risk: c.Risk, RiskText: c.RiskText, Summary: c.Summary,
			Facts: c.Facts, ConsoleUrl: c.ConsoleURL, Locale: c.Locale}
		for _, f := range c.Files {
			pc.Files = append(pc.Files, &commonv1.FileChange{Path: f.Path, Note: f.Note, Lines: f.Lines, More: f.More})
		}
		m.Approval = pc
	}
	for _, im := range r.Images {
		m.Images = append(m.Images, &commonv1.Image{ContentType: im.ContentType, Data: im.Data, Artifact: im.Artifact, Caption: im.Caption})
	}
	return m
}

// PNG is a small valid PNG image (a 2×2 picture), as a browser bridge returns for a screenshot.
func PNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	img.Set(1, 1, color.RGBA{B: 255, A: 255})
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}
