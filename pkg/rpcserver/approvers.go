package rpcserver

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/bearer"
)

// BearerToken returns the request's bearer token ("Authorization: Bearer <token>").
func BearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false
	}
	return token, true
}

type approverKey struct{}

// Approver is the approver a request passed RequireApprover as ("" outside it).
func Approver(ctx context.Context) string {
	name, _ := ctx.Value(approverKey{}).(string)
	return name
}

// RequireApprover is the guard of the suite's REST APIs (approval's jobs, the gateways' dead
// letters): requests that carry an approver's token (pkg/bearer) go on, with the approver in
// their context (Approver). Without a bearer token the answer is 401; with one that names no
// approver 403, after refused (when set) was told the token's fingerprint, never the token.
// The refusals keep their codes; their message is in the request's language (RequestLocale).
func RequireApprover(tokens *bearer.Tokens, realm string, refused func(r *http.Request, fingerprint string), next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := BearerToken(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="`+realm+`"`)
			WriteRESTError(w, http.StatusUnauthorized, "unauthenticated", restText(r, "BEARER_REQUIRED"))
			return
		}
		name, ok := tokens.Authenticate(token)
		if !ok {
			if refused != nil {
				refused(r, bearer.Fingerprint(token))
			}
			WriteRESTError(w, http.StatusForbidden, "unknown_approver", restText(r, "UNKNOWN_APPROVER"))
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), approverKey{}, name)))
	})
}

// WriteRESTError writes the suite's REST error body: {"code": …, "message": …}.
func WriteRESTError(w http.ResponseWriter, status int, code, msg string) {
	WriteJSON(w, status, map[string]string{"code": code, "message": msg})
}

// WriteJSON writes v as a JSON answer.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
