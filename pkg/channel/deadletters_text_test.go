//go:build !serveronly

package channel

import (
	"encoding/json"
	"net/http"
	"testing"
)

func TestDeadLetterTexts(t *testing.T) {
	if err := DeadLetterTexts.Check(); err != nil {
		t.Fatal(err)
	}
	if err := DeadLetterTexts.CheckLanguages(deadLetterTechnical...); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		code   string
		args   []string
		ja, en string
	}{
		{textLimit, []string{"500"}, "limit は 1〜500 の整数にしてください", "limit must be 1..500"},
		{textQueue, nil, "queue は inbox か outbox にしてください", "queue must be inbox or outbox"},
		{textBeforeQueue, nil, "before を使うときは queue も指定してください", "before needs queue"},
		{textBadID, nil, "その dead letter はありません（ID は inbox:<id> か outbox:<id> です）", "no such dead letter (ids are inbox:<id> or outbox:<id>)"},
		{textNotFound, nil, "その dead letter はありません", "no such dead letter"},
		{textDecision, nil, "ボタンの操作や承認・却下のコマンドは再実行しません。送った人の名前で、本人が操作してからずっと後に決めることになるためです。もう一度操作するよう本人に頼んでください",
			"a button press or a decision command is not replayed: it would decide in its sender's name long after they acted; ask them to decide again"},
		{textUnsealed, nil, "この dead letter はこのゲートウェイが書いたものではないため、再実行しません", "this dead letter was not written by this gateway and is never replayed"},
		{textStoreDown, nil, "ゲートウェイの状態ストアに接続できません。もう一度お試しください", "the gateway's state store is unavailable; try again"},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.code] = true
		if got := DeadLetterTexts.Text("ja", tt.code, tt.args...); got != tt.ja {
			t.Errorf("%s ja: %q", tt.code, got)
		}
		if got := DeadLetterTexts.Text("en", tt.code, tt.args...); got != tt.en {
			t.Errorf("%s en: %q", tt.code, got)
		}
	}
	DeadLetterTexts.ReportUncovered(t.Errorf, func(code string) bool { return seen[code] })
}

// An error body keeps its stable code and says its message in the request's language:
// ?locale= first, then Accept-Language, Japanese by default.
func TestDeadLetterAPIErrorsInTheReadersLanguage(t *testing.T) {
	a := startDeadAPI(t)
	for _, tc := range []struct {
		name, query, accept string
		wantLimit, wantID   string
	}{
		{"default", "", "", "limit は 1〜500 の整数にしてください", "その dead letter はありません（ID は inbox:<id> か outbox:<id> です）"},
		{"?locale=en", "locale=en", "ja", "limit must be 1..500", "no such dead letter (ids are inbox:<id> or outbox:<id>)"},
		{"Accept-Language: en", "", "en-US,en;q=0.9", "limit must be 1..500", "no such dead letter (ids are inbox:<id> or outbox:<id>)"},
		{"?locale=ja over Accept-Language: en", "locale=ja", "en", "limit は 1〜500 の整数にしてください", "その dead letter はありません（ID は inbox:<id> か outbox:<id> です）"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []struct{ path, status, code, want string }{
				{DeadLettersPath + "?limit=0", "400", "invalid_argument", tc.wantLimit},
				{DeadLettersPath + "/nowhere:1", "404", "not_found", tc.wantID},
			} {
				url := a.url + c.path
				if tc.query != "" {
					sep := "?"
					if len(c.path) > len(DeadLettersPath) && c.path[len(DeadLettersPath)] == '?' {
						sep = "&"
					}
					url += sep + tc.query
				}
				req, err := http.NewRequest(http.MethodGet, url, nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Authorization", "Bearer "+approverToken)
				if tc.accept != "" {
					req.Header.Set("Accept-Language", tc.accept)
				}
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				var body struct{ Code, Message string }
				err = json.NewDecoder(res.Body).Decode(&body)
				res.Body.Close()
				if err != nil || res.Status[:3] != c.status || body.Code != c.code || body.Message != c.want {
					t.Errorf("%s: %s %+v (%v), want %s %s %q", c.path, res.Status, body, err, c.status, c.code, c.want)
				}
			}
		})
	}
}
