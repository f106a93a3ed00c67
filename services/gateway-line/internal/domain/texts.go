package domain

import (
	"github.com/google/uuid"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
)

// Texts are the user-facing strings of the gateway in one locale: the runtime's, and the
// confirm template's prompt.
type Texts struct {
	chatlink.Texts
	ConfirmPrompt string // %s = job id
}

// TextsFor returns the texts of locale (ja by default, en for "en").
func TextsFor(locale string) Texts {
	if locale == "en" {
		return Texts{Texts: chatlink.TextsFor(locale), ConfirmPrompt: "Approve %s?"}
	}
	return Texts{Texts: chatlink.TextsFor(locale), ConfirmPrompt: "%s を承認しますか？"}
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
