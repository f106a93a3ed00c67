package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/google/uuid"
)

// Texts are the user-facing strings of the gateway in one locale.
type Texts struct {
	Refusal       string
	Welcome       string
	Failure       string
	Truncated     string
	ConfirmPrompt string // %s = job id
	ChooseButton  string
	Approve, Deny string
	Pick          string
}

// Label is the default button label of an action kind.
func (t Texts) Label(k ActionKind) string {
	switch k {
	case ActionApprove:
		return t.Approve
	case ActionDeny:
		return t.Deny
	default:
		return t.Pick
	}
}

// TextsFor returns the texts of locale (ja by default, en for "en").
func TextsFor(locale string) Texts {
	if locale == "en" {
		return Texts{
			Refusal:       "Sorry, this assistant is only available to registered users.",
			Welcome:       "Thanks for adding me. Send a message to start; /help lists the commands.",
			Failure:       "Sorry, your message could not be processed. Please try again later.",
			Truncated:     "(the rest was cut off)",
			ConfirmPrompt: "Approve %s?",
			ChooseButton:  "Choose:",
			Approve:       "Approve", Deny: "Deny", Pick: "Pick",
		}
	}
	return Texts{
		Refusal:       "申し訳ありません。このアシスタントは登録されたユーザーだけが利用できます。",
		Welcome:       "友だち追加ありがとうございます。メッセージを送ると始まります。/help でコマンド一覧を表示します。",
		Failure:       "申し訳ありません。メッセージを処理できませんでした。しばらくしてからもう一度お試しください。",
		Truncated:     "（長いため以降は省略しました）",
		ConfirmPrompt: "%s を承認しますか？",
		ChooseButton:  "選択してください:",
		Approve:       "承認", Deny: "却下", Pick: "選択",
	}
}

// Allowlist holds the LINE user ids that may use the assistant; empty means nobody.
type Allowlist map[string]struct{}

// NewAllowlist builds an allowlist from ids (blank entries ignored).
func NewAllowlist(ids []string) Allowlist {
	a := Allowlist{}
	for _, id := range ids {
		if id = strings.TrimSpace(id); id != "" {
			a[id] = struct{}{}
		}
	}
	return a
}

// Allowed reports whether user may talk to the assistant.
func (a Allowlist) Allowed(user string) bool {
	_, ok := a[user]
	return ok && user != ""
}

// retryNamespace scopes the gateway's name-based retry keys.
func retryNamespace() uuid.UUID {
	return uuid.UUID{0x6f, 0x1c, 0x2a, 0x8e, 0x4b, 0x7d, 0x5e, 0x39, 0x9a, 0x0c, 0x1d, 0x2e, 0x3f, 0x40, 0x51, 0x62}
}

// RetryKey is the X-Line-Retry-Key for name: the same name always gives the same UUID, so a
// retried push (after a crash or a 5xx) is accepted by LINE at most once. A name that already is
// a UUID is used as it is.
func RetryKey(name string) string {
	if u, err := uuid.Parse(name); err == nil {
		return u.String()
	}
	return uuid.NewSHA1(retryNamespace(), []byte(name)).String()
}

// ContentKey is a stable name for a push without a caller-supplied key: the same destination,
// job and texts give the same key.
func ContentKey(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return "content:" + hex.EncodeToString(h.Sum(nil))
}
