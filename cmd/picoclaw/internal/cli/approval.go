package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	executorv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1/executorv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
)

// The approval REST API's JSON (SPEC §6); only what the CLI prints.
type actor struct {
	ID          string `json:"id"`
	Channel     string `json:"channel"`
	DisplayName string `json:"display_name"`
}

type jobJSON struct {
	JobID         string     `json:"job_id"`
	Status        string     `json:"status"`
	Route         string     `json:"route"`
	TaskType      string     `json:"task_type"`
	Summary       string     `json:"summary"`
	Plan          string     `json:"plan"`
	Patch         string     `json:"patch"`
	ContentHash   string     `json:"content_hash"`
	AffectedPaths []string   `json:"affected_paths"`
	Flags         []string   `json:"flags"`
	PolicyRule    string     `json:"policy_rule"`
	PolicyReason  string     `json:"policy_reason"`
	AutoApproved  bool       `json:"auto_approved"`
	DecidedBy     *actor     `json:"decided_by"`
	DenyReason    string     `json:"deny_reason"`
	RequestedAt   time.Time  `json:"requested_at"`
	ExpiresAt     *time.Time `json:"expires_at"`
	UsesBrowser   bool       `json:"uses_browser"`
	Stats         struct {
		Files     int `json:"files"`
		Additions int `json:"additions"`
		Deletions int `json:"deletions"`
	} `json:"stats"`
}

type eventJSON struct {
	Seq        int64           `json:"seq"`
	Type       string          `json:"type"`
	Actor      actor           `json:"actor"`
	Channel    string          `json:"channel"`
	Payload    json.RawMessage `json:"payload"`
	PolicyRule string          `json:"policy_rule"`
	Hash       string          `json:"hash"`
	CreatedAt  time.Time       `json:"created_at"`
}

type autoApproveJSON struct {
	Active      bool   `json:"active"`
	Unavailable bool   `json:"unavailable"`
	StatusText  string `json:"status_text"`
	RevokedJobs *int   `json:"revoked_jobs"`
}

type restError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// rest calls the approval REST API with the bearer token.
func rest(ctx context.Context, g *globals, method, path string, query url.Values, body, out any) error {
	base := g.restURL
	if base == "" {
		base = g.cfg.Services.Approval.PublicURL
	}
	return restAt(ctx, g, "approval", base, method, path, query, body, out)
}

// restAt calls a REST API of the suite (approval's, a gateway's dead letters) at base with the
// approver's bearer token; service names it in errors.
func restAt(ctx context.Context, g *globals, service, base, method, path string, query url.Values, body, out any) error {
	if g.token == "" {
		return &apiError{code: ExitUnauthorized, msg: "PICOCLAW_TOKEN is not set (the " + service + " API needs an approver's bearer token)"}
	}
	if query == nil {
		query = url.Values{}
	}
	query.Set("locale", g.locale)
	u := strings.TrimRight(base, "/") + path + "?" + query.Encode()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+g.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return &apiError{code: ExitUnavailable, msg: fmt.Sprintf("%s unreachable at %s: %v", service, base, err)}
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil {
		return err
	}
	if res.StatusCode >= 300 {
		var e restError
		_ = json.Unmarshal(data, &e)
		if e.Message == "" {
			e.Message = strings.TrimSpace(string(data))
		}
		code := codeForStatus(res.StatusCode)
		if e.Code == "audit_tampered" {
			code = ExitTampered
		}
		return &apiError{code: code, msg: fmt.Sprintf("%s (%s, HTTP %d)", e.Message, e.Code, res.StatusCode)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("unexpected answer from the %s API: %w", service, err)
	}
	return nil
}

func codeForStatus(status int) int {
	switch status {
	case http.StatusNotFound:
		return ExitNotFound
	case http.StatusConflict:
		return ExitConflict
	case http.StatusUnauthorized, http.StatusForbidden:
		return ExitUnauthorized
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		return ExitUsage
	case http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusGatewayTimeout:
		return ExitUnavailable
	}
	return ExitError
}

// jobArg parses the flags of a command about one job and returns that job's id.
func jobArg(fs *flag.FlagSet, args []string) (string, error) {
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return "", err
	}
	if len(pos) != 1 {
		return "", usagef("expected exactly one job id")
	}
	id, err := jobid.Normalize(pos[0])
	if err != nil {
		return "", usagef("%v", err)
	}
	return id, nil
}

func runJobs(ctx context.Context, g *globals, args []string) error {
	fs := newFlags(g, "jobs", commands()["jobs"].usage)
	status := fs.String("status", "", "only jobs in these states (comma separated)")
	limit := fs.Int("limit", 50, "at most this many jobs")
	jsonOut := fs.Bool("json", false, "print JSON")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	q := url.Values{"limit": {fmt.Sprint(*limit)}}
	if *status != "" {
		q.Set("status", strings.ToLower(*status))
	}
	var out struct {
		Jobs []jobJSON `json:"jobs"`
	}
	if err := rest(ctx, g, http.MethodGet, "/v1/jobs", q, nil, &out); err != nil {
		return err
	}
	if *jsonOut {
		return json.NewEncoder(g.io.Out).Encode(out)
	}
	tw := tabwriter.NewWriter(g.io.Out, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tSTATUS\tROUTE\tREQUESTED\tSUMMARY")
	for _, j := range out.Jobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", j.JobID, j.Status, j.Route, j.RequestedAt.Local().Format("01-02 15:04"), oneLine(j.Summary, 60))
	}
	return tw.Flush()
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

func runJob(ctx context.Context, g *globals, args []string) error {
	fs := newFlags(g, "job", commands()["job"].usage)
	jsonOut := fs.Bool("json", false, "print JSON")
	id, err := jobArg(fs, args)
	if err != nil {
		return err
	}
	var job jobJSON
	if err := rest(ctx, g, http.MethodGet, "/v1/jobs/"+id, nil, nil, &job); err != nil {
		return err
	}
	var evs struct {
		ChainValid bool        `json:"chain_valid"`
		Events     []eventJSON `json:"events"`
	}
	if err := rest(ctx, g, http.MethodGet, "/v1/jobs/"+id+"/events", nil, nil, &evs); err != nil {
		return err
	}
	if *jsonOut {
		return json.NewEncoder(g.io.Out).Encode(map[string]any{"job": job, "events": evs.Events, "chain_valid": evs.ChainValid})
	}
	w := g.io.Out
	fmt.Fprintf(w, "%s  %s  route=%s task=%s\n", job.JobID, job.Status, job.Route, job.TaskType)
	if job.Summary != "" {
		fmt.Fprintf(w, "summary: %s\n", job.Summary)
	}
	fmt.Fprintf(w, "files: %s (%d files, +%d -%d)\n", strings.Join(job.AffectedPaths, ", "), job.Stats.Files, job.Stats.Additions, job.Stats.Deletions)
	if len(job.Flags) > 0 {
		fmt.Fprintf(w, "attention: %s\n", strings.Join(job.Flags, ", "))
	}
	fmt.Fprintf(w, "policy: %s %s\n", job.PolicyRule, job.PolicyReason)
	if job.DenyReason != "" {
		fmt.Fprintf(w, "deny reason: %s\n", job.DenyReason)
	}
	fmt.Fprintf(w, "content sha256: %s\n", job.ContentHash)
	chain := "ok"
	if !evs.ChainValid {
		chain = "BROKEN"
	}
	fmt.Fprintf(w, "\naudit trail (hash chain %s):\n", chain)
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	for _, e := range evs.Events {
		who := e.Actor.ID
		if e.Actor.Channel != "" {
			who = e.Actor.Channel + ":" + who
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%.12s\n", e.Seq, e.CreatedAt.Local().Format("2006-01-02 15:04:05"), e.Type, who, e.PolicyRule, e.Hash)
	}
	return tw.Flush()
}

func runApprove(ctx context.Context, g *globals, args []string) error {
	fs := newFlags(g, "approve", commands()["approve"].usage)
	noExec := fs.Bool("no-execute", false, "only record the approval; do not ask the executor to run the job")
	id, err := jobArg(fs, args)
	if err != nil {
		return err
	}
	if err := decide(ctx, g, id, "approve", struct{}{}); err != nil || *noExec {
		return err
	}
	return execute(ctx, g, id)
}

// decide posts a decision on a job (approve, deny) and prints the job's new status.
func decide(ctx context.Context, g *globals, id, decision string, body any) error {
	var job jobJSON
	if err := rest(ctx, g, http.MethodPost, "/v1/jobs/"+id+"/"+decision, nil, body, &job); err != nil {
		return err
	}
	fmt.Fprintf(g.io.Out, "%s: %s\n", job.JobID, job.Status)
	return nil
}

// execute asks the executor to run an approved job (it claims the approved content itself).
func execute(ctx context.Context, g *globals, id string) error {
	tel, err := telemetry.New(ctx, telemetry.Config{ServiceName: "picoclaw-cli", LogWriter: io.Discard}.FromEnv())
	if err != nil {
		return err
	}
	defer func() { _ = tel.Shutdown(context.WithoutCancel(ctx)) }()
	opts, err := g.clientOptions(tel, 10*time.Minute, svcauth.Executor)
	if err != nil {
		return err
	}
	client := executorv1connect.NewExecutorServiceClient(rpcserver.NewHTTPClient(), g.cfg.Services.Executor.URL, opts...)
	res, err := client.Execute(jobid.WithJobID(ctx, id), &executorv1.ExecuteRequest{JobId: id, Locale: g.locale})
	if err != nil {
		return fmt.Errorf("approved, but execution failed: %w", err)
	}
	fmt.Fprintln(g.io.Out, res.GetResultText())
	if !res.GetResult().GetSuccess() {
		return &apiError{code: ExitError, msg: "the job ran with failures"}
	}
	return nil
}

func runDeny(ctx context.Context, g *globals, args []string) error {
	fs := newFlags(g, "deny", commands()["deny"].usage)
	reason := fs.String("reason", "", "why (stored in the audit log)")
	id, err := jobArg(fs, args)
	if err != nil {
		return err
	}
	return decide(ctx, g, id, "deny", map[string]string{"reason": *reason})
}

func runAutoApprove(ctx context.Context, g *globals, args []string) error {
	use := commands()["auto-approve"].usage
	if len(args) == 0 {
		return usagef("expected on, off or status")
	}
	switch args[0] {
	case "status":
		if len(args) > 1 {
			return usagef("status takes no arguments")
		}
		return autoApproveCall(ctx, g, http.MethodGet, nil, nil)
	case "off":
		fs := newFlags(g, "auto-approve off", use)
		reason := fs.String("reason", "", "why")
		if pos, err := parseInterspersed(fs, args[1:]); err != nil {
			return err
		} else if len(pos) > 0 {
			return usagef("unexpected argument %q", pos[0])
		}
		q := url.Values{}
		if *reason != "" {
			q.Set("reason", *reason)
		}
		return autoApproveCall(ctx, g, http.MethodDelete, q, nil)
	case "on":
		fs := newFlags(g, "auto-approve on", use)
		ttl := fs.Duration("ttl", 0, "how long the grant lasts (default: approval.auto_approve.default_ttl; capped by max_ttl)")
		paths := fs.String("paths", "", "allowed path prefixes, comma separated (e.g. docs/,README.md)")
		tasks := fs.String("tasks", "", "allowed task types (design,codegen,review,refactor,ops,docs)")
		routes := fs.String("routes", "", "allowed routes (e.g. CODE1)")
		denied := fs.String("deny-ops", "", "operations never auto-approved (e.g. shell_command)")
		ops := fs.String("ops", "", "operations the grant opts in to: shell (needs --paths too)")
		reason := fs.String("reason", "", "why (stored in the audit log)")
		pos, err := parseInterspersed(fs, args[1:])
		if err != nil {
			return err
		}
		if len(pos) > 0 {
			return usagef("unexpected argument %q", pos[0])
		}
		body := map[string]any{
			"task_types": splitList(*tasks), "routes": splitList(*routes),
			"path_prefixes": splitList(*paths), "denied_operations": splitList(*denied),
			"allowed_operations": splitList(*ops), "reason": *reason,
		}
		if *ttl > 0 {
			body["ttl"] = ttl.String()
		}
		return autoApproveCall(ctx, g, http.MethodPut, nil, body)
	}
	return usagef("expected on, off or status, got %q", args[0])
}

// autoApproveCall sends one Auto-Approve request and prints the status it answers with.
func autoApproveCall(ctx context.Context, g *globals, method string, q url.Values, body any) error {
	var st autoApproveJSON
	if err := rest(ctx, g, method, "/v1/auto-approve", q, body, &st); err != nil {
		return err
	}
	fmt.Fprintln(g.io.Out, st.StatusText)
	return nil
}

func splitList(s string) []string {
	out := []string{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
