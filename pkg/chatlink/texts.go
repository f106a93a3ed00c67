package chatlink

import (
	"strings"
	"unicode/utf8"
)

// Texts are the user-facing strings every channel shows, in one locale.
type Texts struct {
	Refusal string
	Welcome string
	// Unsupported answers a message the assistant cannot read (a sticker, audio, video, a file,
	// a location) and says what it can read: text and images.
	Unsupported string
	// ImageTooLarge (with the cap, e.g. "10 MB"), ImageType, ImageSource and ImageUnavailable
	// answer an image that is not passed on: too big, not JPEG/PNG/GIF/WebP, hosted outside the
	// channel, or no longer downloadable.
	ImageTooLarge    string
	ImageType        string
	ImageSource      string
	ImageUnavailable string
	Failure          string
	Truncated        string
	ChooseButton     string
	Approve, Deny    string
	Pick             string
	// Similar labels "approve and allow similar" buttons that come without a label.
	Similar string
	// OpenConsole labels the link to a job in the approval console.
	OpenConsole string
	// ImageNotShown names an image the channel could not show (%s: where the job keeps it).
	ImageNotShown string
}

// Label is the default button label of an action kind.
func (t Texts) Label(k ActionKind) string {
	switch k {
	case ActionApprove:
		return t.Approve
	case ActionDeny:
		return t.Deny
	case ActionApproveSimilar:
		return t.Similar
	default:
		return t.Pick
	}
}

// TextsFor returns the texts of locale (ja by default, en for "en").
func TextsFor(locale string) Texts {
	if locale == "en" {
		return Texts{
			Refusal:          "Sorry, this assistant is only available to registered users.",
			Welcome:          "Thanks for adding me. Send a message to start; /help lists the commands.",
			Unsupported:      "Sorry, I can read text and images (JPEG, PNG, GIF, WebP) only, not stickers, audio, video, other files or locations. Please write it as text.",
			ImageTooLarge:    "Sorry, the image is too large (the limit is %s). Please send a smaller one.",
			ImageType:        "Sorry, I can read JPEG, PNG, GIF and WebP images only.",
			ImageSource:      "Sorry, images shared from outside this chat service cannot be read. Please send the image file itself.",
			ImageUnavailable: "Sorry, the image could no longer be downloaded. Please send it again.",
			Failure:          "Sorry, your message could not be processed. Please try again later.",
			Truncated:        "(the rest was cut off)",
			ChooseButton:     "Choose:",
			Approve:          "Approve", Deny: "Deny", Pick: "Pick", Similar: "Approve + similar",
			OpenConsole:   "Open in console",
			ImageNotShown: "📷 A screenshot could not be shown here (images need a public address for this channel); it is kept with the job: %s",
		}
	}
	return Texts{
		Refusal:          "申し訳ありません。このアシスタントは登録されたユーザーだけが利用できます。",
		Welcome:          "友だち追加ありがとうございます。メッセージを送ると始まります。/help でコマンド一覧を表示します。",
		Unsupported:      "申し訳ありません。読めるのは文章と画像（JPEG・PNG・GIF・WebP）だけです（スタンプ・音声・動画・その他のファイル・位置情報には対応していません）。文章で送ってください。",
		ImageTooLarge:    "申し訳ありません。画像が大きすぎます（上限は %s です）。小さくして送ってください。",
		ImageType:        "申し訳ありません。読める画像は JPEG・PNG・GIF・WebP だけです。",
		ImageSource:      "申し訳ありません。外部のサービスから共有された画像は読めません。画像そのものを送ってください。",
		ImageUnavailable: "申し訳ありません。画像をダウンロードできませんでした。もう一度送ってください。",
		Failure:          "申し訳ありません。メッセージを処理できませんでした。しばらくしてからもう一度お試しください。",
		Truncated:        "（長いため以降は省略しました）",
		ChooseButton:     "選択してください:",
		Approve:          "承認", Deny: "却下", Pick: "選択", Similar: "承認+同種も",
		OpenConsole:   "コンソールで開く",
		ImageNotShown: "📷 スクリーンショットをここに表示できませんでした（このチャネルで画像を送るには公開アドレスの設定が必要です）。ジョブと一緒に保存されています: %s",
	}
}

// SplitText cuts s into pieces that fit a channel's message limit, preferring line breaks in
// the second half of a piece and never splitting a character. fit(s, limit) is the byte length
// of the longest prefix of s within the limit in the channel's own measure (characters,
// UTF-16 units); newlines at the cuts are dropped.
func SplitText(s string, limit int, fit func(s string, limit int) int) []string {
	if s == "" {
		return nil
	}
	var out []string
	for cut := fit(s, limit); cut < len(s); cut = fit(s, limit) {
		if cut == 0 {
			_, cut = utf8.DecodeRuneInString(s) // a limit below one character: one at a time
		}
		if nl := strings.LastIndexByte(s[:cut], '\n'); nl > cut/2 {
			cut = nl + 1
		}
		out = append(out, strings.TrimRight(s[:cut], "\n"))
		s = strings.TrimLeft(s[cut:], "\n")
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// RuneFit is SplitText's fit for channels that count characters: the byte length of the first
// limit characters of s (all of s when shorter).
func RuneFit(s string, limit int) int {
	i := 0
	for pos := range s {
		if i == limit {
			return pos
		}
		i++
	}
	return len(s)
}
