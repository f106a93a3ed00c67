package fault

// Text is a short generic sentence for the user about a failure of kind k, in Japanese
// (the default) or English (locale "en"). Services show their own texts where they can say
// more; this is what is left when they cannot.
func (k Kind) Text(locale string) string {
	t, ok := texts[k]
	if !ok {
		t = texts[Internal]
	}
	if locale == "en" {
		return t[1]
	}
	return t[0]
}

var texts = map[Kind][2]string{
	Internal:        {"内部エラーが発生しました。時間をおいてもう一度お試しください。", "Something went wrong inside. Please try again later."},
	Invalid:         {"入力が正しくありません。", "The request is not valid."},
	NotFound:        {"見つかりませんでした。", "Not found."},
	Permission:      {"この操作は許可されていません。", "You are not allowed to do this."},
	Unauthenticated: {"認証できませんでした。", "Could not verify who you are."},
	Conflict:        {"ほかの操作と重なりました。もう一度お試しください。", "Another change got there first. Please try again."},
	Precondition:    {"今の状態ではこの操作はできません。", "This cannot be done in the current state."},
	Exhausted:       {"上限に達しました。しばらくしてからお試しください。", "A limit was reached. Please try again later."},
	Unavailable:     {"サービスに一時的に接続できません。自動で再試行します。", "A service is temporarily unreachable. It will be retried."},
	DataLoss:        {"データの整合性を確認できませんでした。管理者に連絡してください。", "Data failed an integrity check. Please contact the operator."},
	Canceled:        {"取り消されました。", "Cancelled."},
	Deadline:        {"時間内に終わりませんでした。", "It did not finish in time."},
}
