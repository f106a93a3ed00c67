// Package httpapi serves approval's REST API (SPEC §6) with bearer-token approvers, JSON errors
// with stable codes and the OpenAPI document that describes it.
package httpapi

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

//go:embed openapi.json
var openAPIDoc []byte

// OpenAPI returns the document served at /v1/openapi.json.
func OpenAPI() []byte { return openAPIDoc }

// API is the REST API.
type API struct {
	svc       *app.Service
	approvers *domain.Approvers
	log       *slog.Logger
	now       func() time.Time
	refusals  refusalBudget
}

// refusalBudget bounds how many refused attempts per minute become audit events: the public
// REST port must not let anyone fill the tamper-evident log (and its disk) with refusals.
// Attempts beyond the budget are still refused, logged and counted, just not each recorded.
type refusalBudget struct {
	mu      sync.Mutex
	window  time.Time
	n       int
	dropped int
}

const refusalsPerMinute = 30

// take reports whether another refusal may be recorded now, and how many were dropped since
// the last one that was.
func (b *refusalBudget) take(now time.Time) (ok bool, dropped int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Sub(b.window) >= time.Minute {
		b.window, b.n = now, 0
	}
	if b.n >= refusalsPerMinute {
		b.dropped++
		return false, 0
	}
	b.n++
	dropped, b.dropped = b.dropped, 0
	return true, dropped
}

// maxAttemptLen clips what a refused request's path adds to the audit log.
const maxAttemptLen = 128

// New builds the API.
func New(svc *app.Service, approvers *domain.Approvers, log *slog.Logger) *API {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &API{svc: svc, approvers: approvers, log: log, now: time.Now}
}

// Route is one REST route (the OpenAPI test compares them with the document).
type Route struct {
	Method, Pattern string
	Handler         http.HandlerFunc
	// Public routes need no bearer token.
	Public bool
}

// Routes lists every route of the API.
func (a *API) Routes() []Route {
	return []Route{
		{Method: http.MethodGet, Pattern: "/v1/openapi.json", Handler: a.openapi, Public: true},
		{Method: http.MethodGet, Pattern: "/v1/jobs", Handler: a.listJobs},
		{Method: http.MethodGet, Pattern: "/v1/jobs/{id}", Handler: a.getJob},
		{Method: http.MethodGet, Pattern: "/v1/jobs/{id}/events", Handler: a.jobEvents},
		{Method: http.MethodPost, Pattern: "/v1/jobs/{id}/approve", Handler: a.approve},
		{Method: http.MethodPost, Pattern: "/v1/jobs/{id}/approve-similar", Handler: a.approveSimilar},
		{Method: http.MethodPost, Pattern: "/v1/jobs/{id}/deny", Handler: a.deny},
		{Method: http.MethodGet, Pattern: "/v1/auto-approve", Handler: a.getAutoApprove},
		{Method: http.MethodPut, Pattern: "/v1/auto-approve", Handler: a.putAutoApprove},
		{Method: http.MethodDelete, Pattern: "/v1/auto-approve", Handler: a.deleteAutoApprove},
		{Method: http.MethodPost, Pattern: "/v1/policy/simulate", Handler: a.simulatePolicy},
		{Method: http.MethodGet, Pattern: "/v1/images", Handler: a.listImages},
	}
}

// Handler returns a chi router with every route, for tests and for mounting.
func (a *API) Handler() http.Handler {
	r := chi.NewRouter()
	a.Register(func(method, pattern string, h http.Handler) { r.Method(method, pattern, h) })
	r.NotFound(NotFound)
	r.MethodNotAllowed(MethodNotAllowed)
	return r
}

// NotFound answers unknown routes with a JSON error.
func NotFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, r, http.StatusNotFound, "not_found", TextNoRoute)
}

// MethodNotAllowed answers a known route with the wrong method with a JSON error.
func MethodNotAllowed(w http.ResponseWriter, r *http.Request) {
	writeError(w, r, http.StatusMethodNotAllowed, "method_not_allowed", TextMethod)
}

// Register adds every route through handle (rpcserver.Server.HandleHTTP traces them).
func (a *API) Register(handle func(method, pattern string, h http.Handler)) {
	for _, rt := range a.Routes() {
		h := http.Handler(rt.Handler)
		if !rt.Public {
			h = a.authenticate(h)
		}
		if strings.Contains(rt.Pattern, "{id}") {
			h = spanJobID(h)
		}
		handle(rt.Method, rt.Pattern, h)
	}
}

type actorKey struct{}

// authenticate maps the bearer token to an approver (rpcserver.RequireApprover, as on the gateways): no
// credentials → 401; a token that names no approver → 403, audited with the token's fingerprint
// only.
func (a *API) authenticate(next http.Handler) http.Handler {
	return rpcserver.RequireApprover(a.approvers.Tokens(), "picoclaw-approval", a.refused, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		actor := domain.RESTActor(rpcserver.Approver(r.Context()))
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), actorKey{}, actor)))
	}))
}

// refused audits a request whose token names no approver, within the refusal budget.
func (a *API) refused(r *http.Request, fingerprint string) {
	attempt := r.Method + " " + r.URL.Path
	if len(attempt) > maxAttemptLen {
		attempt = strings.ToValidUTF8(attempt[:maxAttemptLen], "") + "…"
	}
	if ok, dropped := a.refusals.take(a.now()); ok {
		if dropped > 0 {
			attempt += fmt.Sprintf(" (+%d refusals not recorded one by one)", dropped)
		}
		a.svc.RefuseAccess(r.Context(), attempt, domain.Actor{ID: fingerprint, Channel: "rest"})
	} else {
		a.log.WarnContext(r.Context(), "approval.access_refused_unrecorded", slog.String("token", fingerprint))
	}
}

func actorFrom(r *http.Request) domain.Actor {
	a, _ := r.Context().Value(actorKey{}).(domain.Actor)
	return a
}

func (a *API) openapi(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(openAPIDoc)
}

func (a *API) listJobs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := app.ListFilter{SessionID: q.Get("session_id")}
	for _, s := range strings.Split(q.Get("status"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			if !domain.Status(s).Valid() {
				writeError(w, r, http.StatusBadRequest, "invalid_argument", TextStatus, strconv.Quote(clip(s)), strings.Join(statusNames, ", "))
				return
			}
			f.Statuses = append(f.Statuses, domain.Status(s))
		}
	}
	var err error
	if f.Limit, err = intParam(q.Get("limit"), 100); err != nil || f.Limit < 1 || f.Limit > 500 {
		writeError(w, r, http.StatusBadRequest, "invalid_argument", TextLimit, "500")
		return
	}
	if f.Offset, err = intParam(q.Get("offset"), 0); err != nil || f.Offset < 0 {
		writeError(w, r, http.StatusBadRequest, "invalid_argument", TextOffset)
		return
	}
	jobs, err := a.svc.List(r.Context(), f)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := struct {
		Jobs []jobView `json:"jobs"`
	}{Jobs: []jobView{}}
	for _, j := range jobs {
		out.Jobs = append(out.Jobs, viewJob(j, viewLocale(r)))
	}
	writeJSON(w, http.StatusOK, out)
}

// statusNames are the states a job list may be filtered by.
var statusNames = []string{string(domain.StatusPending), string(domain.StatusGranted), string(domain.StatusAutoApproved),
	string(domain.StatusDenied), string(domain.StatusExpired), string(domain.StatusCancelled), string(domain.StatusExecuting),
	string(domain.StatusCompleted), string(domain.StatusFailed), string(domain.StatusRefused), string(domain.StatusAnswered)}

// clip keeps what a request's own words add to an answer short.
func clip(s string) string {
	if r := []rune(s); len(r) > 64 {
		return string(r[:64]) + "…"
	}
	return s
}

// jobID is the job id of the path, normalised; a malformed one is answered here.
func jobID(w http.ResponseWriter, r *http.Request) (string, bool) {
	raw := chi.URLParam(r, "id")
	id, err := jobid.Normalize(raw)
	if err != nil {
		writeError(w, r, http.StatusBadRequest, "invalid_argument", TextJobID, strconv.Quote(clip(raw)))
		return "", false
	}
	return id, true
}

func intParam(s string, def int) (int, error) {
	if s == "" {
		return def, nil
	}
	return strconv.Atoi(s)
}

func (a *API) getJob(w http.ResponseWriter, r *http.Request) {
	id, ok := jobID(w, r)
	if !ok {
		return
	}
	j, err := a.svc.Get(r.Context(), id)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewJob(j, viewLocale(r)))
}

func (a *API) jobEvents(w http.ResponseWriter, r *http.Request) {
	id, ok := jobID(w, r)
	if !ok {
		return
	}
	evs, valid, err := a.svc.Events(r.Context(), id)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := struct {
		JobID      string      `json:"job_id"`
		ChainValid bool        `json:"chain_valid"`
		Events     []eventView `json:"events"`
	}{JobID: evs[0].JobID, ChainValid: valid, Events: []eventView{}}
	for _, e := range evs {
		out.Events = append(out.Events, viewEvent(e))
	}
	writeJSON(w, http.StatusOK, out)
}

func (a *API) approve(w http.ResponseWriter, r *http.Request) {
	id, ok := jobID(w, r)
	if !ok {
		return
	}
	j, err := a.svc.Approve(r.Context(), id, actorFrom(r), "")
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewJob(j, viewLocale(r)))
}

// approveSimilar approves the job and allows similar jobs for a while (body {"ttl": "30m"}).
func (a *API) approveSimilar(w http.ResponseWriter, r *http.Request) {
	id, ok := jobID(w, r)
	if !ok {
		return
	}
	var body struct {
		TTL string `json:"ttl"`
	}
	if !decodeOptional(w, r, &body) {
		return
	}
	var ttl time.Duration
	if body.TTL != "" {
		d, err := time.ParseDuration(body.TTL)
		if err != nil {
			writeError(w, r, http.StatusBadRequest, "invalid_argument", TextTTL, strconv.Quote(clip(body.TTL)))
			return
		}
		ttl = d
	}
	res, err := a.svc.ApproveSimilar(r.Context(), id, actorFrom(r), ttl, "")
	if err != nil {
		a.fail(w, r, err)
		return
	}
	now := a.now()
	writeJSON(w, http.StatusOK, similarView{Job: viewJob(res.Job, viewLocale(r)), Grant: viewGrant(&res.Grant, now),
		StatusText: domain.SimilarApprovedText(res.Job.ID, &res.Grant, now, Locale(r))})
}

func (a *API) deny(w http.ResponseWriter, r *http.Request) {
	id, ok := jobID(w, r)
	if !ok {
		return
	}
	var body struct {
		Reason string `json:"reason"`
	}
	if !decodeOptional(w, r, &body) {
		return
	}
	j, err := a.svc.Deny(r.Context(), id, actorFrom(r), body.Reason, "")
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewJob(j, viewLocale(r)))
}

func (a *API) getAutoApprove(w http.ResponseWriter, r *http.Request) {
	st := a.svc.AutoApproveStatus(r.Context())
	now := a.now()
	g := viewGrant(st.Grant, now)
	writeJSON(w, http.StatusOK, autoApproveView{Active: g != nil, Unavailable: st.Unavailable, Grant: g,
		StatusText: domain.GrantStatusText(st.Grant, now, Locale(r), st.Unavailable)})
}

func (a *API) putAutoApprove(w http.ResponseWriter, r *http.Request) {
	var body struct {
		TTL              string   `json:"ttl"`
		TaskTypes        []string `json:"task_types"`
		Routes           []string `json:"routes"`
		PathPrefixes     []string `json:"path_prefixes"`
		DeniedOperations []string `json:"denied_operations"`
		AllowedOps       []string `json:"allowed_operations"`
		Reason           string   `json:"reason"`
	}
	if !decodeOptional(w, r, &body) {
		return
	}
	in := app.GrantInput{TaskTypes: body.TaskTypes, Routes: body.Routes, PathPrefixes: body.PathPrefixes,
		DeniedOperations: body.DeniedOperations, AllowedOperations: body.AllowedOps, Reason: body.Reason}
	if body.TTL != "" {
		d, err := time.ParseDuration(body.TTL)
		if err != nil {
			writeError(w, r, http.StatusBadRequest, "invalid_argument", TextTTL, strconv.Quote(clip(body.TTL)))
			return
		}
		in.TTL = d
	}
	g, err := a.svc.EnableAutoApprove(r.Context(), actorFrom(r), in)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	now := a.now()
	writeJSON(w, http.StatusOK, autoApproveView{Active: true, Grant: viewGrant(&g, now),
		StatusText: domain.GrantStatusText(&g, now, Locale(r), false)})
}

func (a *API) deleteAutoApprove(w http.ResponseWriter, r *http.Request) {
	n, err := a.svc.DisableAutoApprove(r.Context(), actorFrom(r), r.URL.Query().Get("reason"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, autoApproveView{Active: false, RevokedJobs: &n,
		StatusText: domain.GrantStatusText(nil, a.now(), Locale(r), false)})
}

// decodeOptional reads a JSON body when there is one; an empty body is fine.
func decodeOptional(w http.ResponseWriter, r *http.Request, dst any) bool {
	if r.ContentLength == 0 {
		return true
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil && !errors.Is(err, io.EOF) {
		bodyError(w, r, err)
		return false
	}
	return true
}

// fail answers a failed request: the status and stable code come from the error's fault kind
// (pkg/fault.Public), the message is its words for the user in the request's language
// (message); a tampered audit log and internal errors are logged.
func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, code, _ := fault.Public(err)
	switch {
	case errors.Is(err, domain.ErrTampered):
		// The job's audit log or row was changed outside the service: nothing is decided on it.
		a.log.ErrorContext(r.Context(), "approval.audit_tampered", slog.String("error", err.Error()))
	case status >= http.StatusInternalServerError:
		a.log.ErrorContext(r.Context(), "approval.request_failed", slog.String("code", code), slog.String("error", err.Error()))
	}
	writeJSON(w, status, map[string]string{"code": code, "message": message(r, err)})
}

// message is what the user is told about err in the request's language: a refusal's own words
// (a fault.Message of the use cases), else the API's words for what it was about (a job not
// found, a tampered audit log), else its kind's. Internal and unavailable errors say nothing
// more: their detail is for the log.
func message(r *http.Request, err error) string {
	locale := Locale(r)
	k := fault.KindOf(err)
	id := chi.URLParam(r, "id")
	switch {
	case k == fault.Internal || k == fault.Unavailable:
		return Texts.Text(locale, kindTexts[k])
	case errors.Is(err, domain.ErrTampered) && id != "":
		return Texts.Text(locale, TextAuditTampered)
	case errors.Is(err, domain.ErrTampered):
		return Texts.Text(locale, TextGrantLogBroken)
	}
	if text, ok := fault.Text(err, locale); ok {
		return text
	}
	if n, nerr := jobid.Normalize(id); k == fault.NotFound && nerr == nil {
		return Texts.Text(locale, TextJobNotFound, n)
	}
	t, ok := kindTexts[k]
	if !ok {
		t = TextInternal
	}
	return Texts.Text(locale, t)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// spanJobID puts the job id of the path on the request's span (job_id, as on every other span
// of the job), when it is a valid job id.
func spanJobID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id, err := jobid.Normalize(chi.URLParam(r, "id")); err == nil {
			trace.SpanFromContext(r.Context()).SetAttributes(attribute.String("job_id", id))
		}
		next.ServeHTTP(w, r)
	})
}
