//go:build !serveronly

package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/httpapi"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/store"
)

const token = "ops-token-0123456789abcdef-ghijklmnop"

type fixture struct {
	srv    *httptest.Server
	svc    *app.Service
	store  *store.SQLite
	doc    *openapi3.T
	router routers.Router
}

func newFixture(t *testing.T) *fixture { t.Helper(); return newFixtureWith(t, nil) }

// newFixtureWith is newFixture with the use cases' configuration adjusted by tweak.
func newFixtureWith(t *testing.T, tweak func(*app.Config)) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenSQLite(ctx, filepath.Join(t.TempDir(), "audit.db"), store.WithKeyring(testKeys))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	rdb := testinfra.Redis(t)
	approvers, err := domain.NewApprovers(domain.ApproverConfig{RESTTokens: "ops:" + token})
	if err != nil {
		t.Fatal(err)
	}
	cfg := app.Config{PendingTTL: time.Hour, AutoApproveAllowed: true, DefaultGrantTTL: time.Hour, MaxGrantTTL: 24 * time.Hour}
	if tweak != nil {
		tweak(&cfg)
	}
	svc := app.New(st, store.NewRedisGrants(redisKV(t, rdb), rdb.Prefix, []byte("test-grant-seal-key"), nil), approvers, cfg, nil, app.WithKeyring(testKeys),
		app.WithImages(st, nil))
	api := httpapi.New(svc, approvers, nil)
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)

	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(httpapi.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(ctx); err != nil {
		t.Fatalf("OpenAPI document does not validate: %v", err)
	}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{srv: srv, svc: svc, store: st, doc: doc, router: router}
}

// do sends a request and checks request and response against the OpenAPI document.
func (f *fixture) do(t *testing.T, method, path, auth string, body any) (int, map[string]any) {
	t.Helper()
	return f.doWith(t, method, path, auth, nil, body)
}

// doWith is do with extra request headers.
func (f *fixture) doWith(t *testing.T, method, path, auth string, header http.Header, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	var raw []byte
	if body != nil {
		raw, _ = json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, f.srv.URL+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	respBody, _ := io.ReadAll(resp.Body)

	// Validate against the document, with the server part of the URL stripped.
	vreq, _ := http.NewRequest(method, path, bytes.NewReader(raw))
	vreq.Header = req.Header.Clone()
	route, params, err := f.router.FindRoute(vreq)
	if err != nil {
		t.Fatalf("%s %s is not in the OpenAPI document: %v", method, path, err)
	}
	in := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true}}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil && resp.StatusCode < 400 {
		t.Errorf("%s %s: request does not match the document: %v", method, path, err)
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true}}
	out.SetBodyBytes(respBody)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		t.Errorf("%s %s -> %d: response does not match the document: %v\n%s", method, path, resp.StatusCode, err, respBody)
	}
	var m map[string]any
	_ = json.Unmarshal(respBody, &m)
	return resp.StatusCode, m
}

func TestOpenAPIMatchesRoutes(t *testing.T) {
	f := newFixture(t)
	var documented []string
	for path, item := range f.doc.Paths.Map() {
		for method := range item.Operations() {
			documented = append(documented, method+" "+path)
		}
	}
	var served []string
	for _, r := range httpapi.New(nil, nil, nil).Routes() {
		served = append(served, r.Method+" "+r.Pattern)
	}
	slices.Sort(documented)
	slices.Sort(served)
	if !slices.Equal(documented, served) {
		t.Fatalf("document and routes differ:\ndocumented %q\nserved     %q", documented, served)
	}
	for _, r := range httpapi.New(nil, nil, nil).Routes() {
		op := f.doc.Paths.Find(r.Pattern).GetOperation(r.Method)
		public := op.Security != nil && len(*op.Security) == 0
		if public != r.Public {
			t.Errorf("%s %s: public=%v in the document, %v in the server", r.Method, r.Pattern, public, r.Public)
		}
		if !r.Public && (op.Responses.Value("401") == nil || op.Responses.Value("403") == nil) {
			t.Errorf("%s %s: 401/403 not documented", r.Method, r.Pattern)
		}
	}
	code, _ := f.do(t, http.MethodGet, "/v1/openapi.json", "", nil)
	if code != http.StatusOK {
		t.Errorf("openapi.json = %d", code)
	}
}

func TestREST(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.svc.RequestApproval(ctx, app.RequestInput{JobID: "job_20260301_001", Plan: "docs",
		Patch: `[{"type":"file_edit","action":"update","target":"docs/a.md","content":"x"}]`, TaskType: "docs"}); err != nil {
		t.Fatal(err)
	}

	code, body := f.do(t, http.MethodGet, "/v1/jobs", "", nil)
	if code != http.StatusUnauthorized || body["code"] != "unauthenticated" {
		t.Errorf("no token: %d %v", code, body)
	}
	code, body = f.do(t, http.MethodPost, "/v1/jobs/job_20260301_001/approve", "not-a-known-token-at-all", nil)
	if code != http.StatusForbidden || body["code"] != "unknown_approver" {
		t.Errorf("unknown token: %d %v", code, body)
	}
	access, _ := f.store.Events(ctx, domain.StreamAccess)
	if len(access) != 1 || access[0].Type != domain.EventAccessRefused || strings.Contains(string(access[0].Payload), "not-a-known") ||
		strings.Contains(access[0].Actor.ID, "not-a-known") {
		t.Errorf("refusal audit = %+v", access)
	}
	code, body = f.do(t, http.MethodGet, "/v1/jobs/job_20260301_404", token, nil)
	if code != http.StatusNotFound || body["code"] != "not_found" {
		t.Errorf("unknown job: %d %v", code, body)
	}
	code, body = f.do(t, http.MethodGet, "/v1/jobs/nonsense", token, nil)
	if code != http.StatusBadRequest || body["code"] != "invalid_argument" {
		t.Errorf("malformed id: %d %v", code, body)
	}
	code, body = f.do(t, http.MethodGet, "/v1/jobs?status=pending", token, nil)
	if code != http.StatusOK || len(body["jobs"].([]any)) != 1 {
		t.Errorf("list pending: %d %v", code, body)
	}
	code, body = f.do(t, http.MethodGet, "/v1/jobs?status=bogus", token, nil)
	if code != http.StatusBadRequest {
		t.Errorf("bad status filter: %d %v", code, body)
	}
	code, body = f.do(t, http.MethodGet, "/v1/jobs/JOB_20260301_001", token, nil)
	if code != http.StatusOK || body["status"] != "pending" {
		t.Errorf("get: %d %v", code, body)
	}
	// The policy's reason: as recorded, as a code, and said in the language asked for.
	for query, want := range map[string]string{"": "Auto-Approve はオフです", "?locale=ja": "Auto-Approve はオフです", "?locale=en": "Auto-Approve is off"} {
		code, body = f.do(t, http.MethodGet, "/v1/jobs/job_20260301_001"+query, token, nil)
		if code != http.StatusOK || body["policy_reason"] != "Auto-Approve is off" || body["policy_reason_code"] != domain.CodeAskNoGrant ||
			body["policy_reason_text"] != want {
			t.Errorf("get%s: %d %v", query, code, body)
		}
	}
	code, body = f.do(t, http.MethodPost, "/v1/jobs/job_20260301_001/approve", token, nil)
	if code != http.StatusOK || body["status"] != "granted" || body["decided_by"].(map[string]any)["id"] != "ops" {
		t.Errorf("approve: %d %v", code, body)
	}
	code, body = f.do(t, http.MethodPost, "/v1/jobs/job_20260301_001/approve", token, nil)
	if code != http.StatusConflict || body["code"] != "conflict" {
		t.Errorf("approve decided job: %d %v", code, body)
	}
	code, body = f.do(t, http.MethodPost, "/v1/jobs/job_20260301_001/deny", token, map[string]string{"reason": "late"})
	if code != http.StatusConflict {
		t.Errorf("deny decided job: %d %v", code, body)
	}
	code, body = f.do(t, http.MethodGet, "/v1/jobs/job_20260301_001/events", token, nil)
	if code != http.StatusOK || body["chain_valid"] != true || len(body["events"].([]any)) != 4 {
		t.Errorf("events: %d %v", code, body)
	}

	if _, err := f.svc.RequestApproval(ctx, app.RequestInput{JobID: "job_20260301_002", Plan: "docs",
		Patch: `[{"type":"file_edit","action":"update","target":"docs/b.md","content":"x"}]`}); err != nil {
		t.Fatal(err)
	}
	code, body = f.do(t, http.MethodPost, "/v1/jobs/job_20260301_002/deny", token, map[string]string{"reason": "not this"})
	if code != http.StatusOK || body["status"] != "denied" || body["deny_reason"] != "not this" {
		t.Errorf("deny: %d %v", code, body)
	}

	code, body = f.do(t, http.MethodPut, "/v1/auto-approve", token, map[string]any{"ttl": "30m", "path_prefixes": []string{"docs/"}, "task_types": []string{"docs"}})
	if code != http.StatusOK || body["active"] != true {
		t.Errorf("enable: %d %v", code, body)
	}
	code, body = f.do(t, http.MethodGet, "/v1/auto-approve?locale=en", token, nil)
	if code != http.StatusOK || body["active"] != true || !strings.Contains(body["status_text"].(string), "paths: docs") {
		t.Errorf("status: %d %v", code, body)
	}
	code, body = f.do(t, http.MethodPut, "/v1/auto-approve", token, map[string]any{"ttl": "48h"})
	if code != http.StatusBadRequest || body["code"] != "invalid_argument" {
		t.Errorf("ttl over max: %d %v", code, body)
	}
	code, body = f.do(t, http.MethodPut, "/v1/auto-approve", token, map[string]any{"ttl": "soon"})
	if code != http.StatusBadRequest {
		t.Errorf("bad ttl: %d %v", code, body)
	}
	code, body = f.do(t, http.MethodDelete, "/v1/auto-approve", token, nil)
	if code != http.StatusOK || body["active"] != false {
		t.Errorf("disable: %d %v", code, body)
	}
}

var testKeys = func() *domain.Keyring {
	k, err := domain.NewKeyring([]byte("test-audit-key-0123456789abcdef0123"))
	if err != nil {
		panic(err)
	}
	return k
}()

// A flood of unknown tokens is refused every time but cannot fill the audit log.
func TestRefusalsCannotFloodTheAuditLog(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	long := "/v1/jobs/" + strings.Repeat("x", 4000) + "/approve"
	for i := 0; i < 100; i++ {
		req, _ := http.NewRequest(http.MethodPost, f.srv.URL+long, nil)
		req.Header.Set("Authorization", fmt.Sprintf("Bearer flood-token-%03d-0123456789abcdefghij", i))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden {
			t.Fatalf("attempt %d: %d", i, res.StatusCode)
		}
	}
	access, err := f.store.Events(ctx, domain.StreamAccess)
	if err != nil {
		t.Fatal(err)
	}
	if len(access) == 0 || len(access) > 30 {
		t.Fatalf("%d refusal events recorded, want 1..30", len(access))
	}
	for _, e := range access {
		if len(e.Payload) > 1024 {
			t.Fatalf("a refusal event of %d bytes", len(e.Payload))
		}
	}
}

// TestEveryPrivateRouteRefusesOutsiders: without a token every non-public route answers 401,
// with a token that is no approver's 403 — new routes (approve-similar, policy simulate)
// included, and before any handler runs.
func TestEveryPrivateRouteRefusesOutsiders(t *testing.T) {
	f := newFixture(t)
	for _, r := range httpapi.New(nil, nil, nil).Routes() {
		if r.Public {
			continue
		}
		path := strings.NewReplacer("{id}", "job_20260301_099", "{job_id}", "job_20260301_099").Replace(r.Pattern)
		for token, want := range map[string]int{"": http.StatusUnauthorized, "not-a-known-token-at-all": http.StatusForbidden} {
			req, err := http.NewRequest(r.Method, f.srv.URL+path, strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("%s %s with token %q: %d, want %d", r.Method, path, token, resp.StatusCode, want)
			}
		}
	}
}

// redisKV is the grant store's own Redis client on rdb's server, closed when the test ends.
func redisKV(t testing.TB, rdb testinfra.RedisDB) *store.RedisClient {
	c := store.NewRedisClient(store.RedisOptions{Addr: rdb.Addr})
	t.Cleanup(func() { _ = c.Close() })
	return c
}
