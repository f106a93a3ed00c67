package rpcserver

import (
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
)

// RequestLocale is the language a REST request asks its answers in, "ja" or "en": the locale
// query parameter when it names one of them, else the first of them in Accept-Language by
// weight, else Japanese, the suite's default.
func RequestLocale(r *http.Request) string {
	if l, ok := supportedLocale(r.URL.Query().Get("locale")); ok {
		return l
	}
	return AcceptLanguage(r.Header.Get("Accept-Language"))
}

// AcceptLanguage is the first of ja and en an Accept-Language header prefers ("ja" when it
// names neither): ranges by weight, ties in the order given, q=0 refused.
func AcceptLanguage(header string) string {
	type choice struct {
		tag string
		q   float64
	}
	var choices []choice
	for _, part := range strings.Split(header, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = f
				}
			}
		}
		if tag = strings.TrimSpace(tag); tag != "" && q > 0 {
			choices = append(choices, choice{tag, q})
		}
	}
	sort.SliceStable(choices, func(i, j int) bool { return choices[i].q > choices[j].q })
	for _, c := range choices {
		if l, ok := supportedLocale(c.tag); ok {
			return l
		}
	}
	return "ja"
}

// supportedLocale maps a language tag (ja, ja-JP, en, en-GB …) to the suite's locale.
func supportedLocale(tag string) (string, bool) {
	primary, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
	primary, _, _ = strings.Cut(primary, "_")
	switch primary {
	case "ja":
		return "ja", true
	case "en":
		return "en", true
	}
	return "", false
}

// restTexts are the words of the REST guard's refusals (RequireApprover), by code.
var restTexts = fault.Catalog{
	"BEARER_REQUIRED":  {"Bearer トークンが必要です", "a bearer token is required"},
	"UNKNOWN_APPROVER": {"このトークンは承認者のものではありません", "the token does not belong to an approver"},
}

// restText is a refusal of the REST guard in the request's language.
func restText(r *http.Request, code string) string {
	return restTexts.Text(RequestLocale(r), code)
}
