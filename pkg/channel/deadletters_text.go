package channel

import (
	"net/http"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
)

// DeadLetterTexts are the dead-letter API's words in its error bodies, by text code: the message
// beside the body's stable code, in the request's language (?locale=, else Accept-Language; ja
// by default).
var DeadLetterTexts = fault.Catalog{
	textLimit:       {"limit は 1〜%[1]s の整数にしてください", "limit must be 1..%[1]s"},
	textQueue:       {"queue は inbox か outbox にしてください", "queue must be inbox or outbox"},
	textBeforeQueue: {"before を使うときは queue も指定してください", "before needs queue"},
	textBadID:       {"その dead letter はありません（ID は inbox:<id> か outbox:<id> です）", "no such dead letter (ids are inbox:<id> or outbox:<id>)"},
	textNotFound:    {"その dead letter はありません", "no such dead letter"},
	textDecision:    {"ボタンの操作や承認・却下のコマンドは再実行しません。送った人の名前で、本人が操作してからずっと後に決めることになるためです。もう一度操作するよう本人に頼んでください", "a button press or a decision command is not replayed: it would decide in its sender's name long after they acted; ask them to decide again"},
	textUnsealed:    {"この dead letter はこのゲートウェイが書いたものではないため、再実行しません", "this dead letter was not written by this gateway and is never replayed"},
	textStoreDown:   {"ゲートウェイの状態ストアに接続できません。もう一度お試しください", "the gateway's state store is unavailable; try again"},
}

// The text codes of DeadLetterTexts (the body's code is the stable one callers match on).
const (
	textLimit       = "DEAD_LETTER_LIMIT_RANGE"
	textQueue       = "DEAD_LETTER_QUEUE_UNKNOWN"
	textBeforeQueue = "DEAD_LETTER_BEFORE_NEEDS_QUEUE"
	textBadID       = "DEAD_LETTER_ID_INVALID"
	textNotFound    = "DEAD_LETTER_NOT_FOUND"
	textDecision    = "DEAD_LETTER_DECISION_NOT_REPLAYED"
	textUnsealed    = "DEAD_LETTER_UNSEALED"
	textStoreDown   = "DEAD_LETTER_STORE_UNAVAILABLE"
)

// deadLetterTechnical are the words the Japanese texts keep as they are.
var deadLetterTechnical = []string{"limit", "queue", "inbox", "outbox", "before", "dead", "letter", "ID", "inbox:<id>", "outbox:<id>", "id"}

// refuse writes an error body: the stable code and the text of DeadLetterTexts in r's language.
func refuse(w http.ResponseWriter, r *http.Request, status int, code, text string, args ...string) {
	rpcserver.WriteRESTError(w, status, code, DeadLetterTexts.Text(rpcserver.RequestLocale(r), text, args...))
}
