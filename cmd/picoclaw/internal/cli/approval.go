package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"connectrpc.com/connect"
	"github.com/spf13/cobra"

	executorv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1/executorv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/fault"
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
	JobID         string   `json:"job_id"`
	Status        string   `json:"status"`
	Route         string   `json:"route"`
	TaskType      string   `json:"task_type"`
	Summary       string   `json:"summary"`
	Plan          string   `json:"plan"`
	Patch         string   `json:"patch"`
	ContentHash   string   `json:"content_hash"`
	AffectedPaths []string `json:"affected_paths"`
	Flags         []string `json:"flags"`
	PolicyRule    string   `json:"policy_rule"`
	PolicyReason  string   `json:"policy_reason"`
	// PolicyReasonText is the reason in the CLI's locale (servers before it have only the
	// reason as recorded).
	PolicyReasonText string     `json:"policy_reason_text,omitempty"`
	AutoApproved     bool       `json:"auto_approved"`
	DecidedBy        *actor     `json:"decided_by"`
	DenyReason       string     `json:"deny_reason"`
	RequestedAt      time.Time  `json:"requested_at"`
	ExpiresAt        *time.Time `json:"expires_at"`
	UsesBrowser      bool       `json:"uses_browser"`
	Stats            struct {
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
func rest(ctx context.Context, g *globals, method, path string, query neturl.Values, body, out any) error {
	base := g.restURL
	if base == "" {
		base = g.cfg.Services.Approval.PublicURL
	}
	// The REST URL may be given with its /v1/ (as `picoclaw run` prints it) or without.
	base = strings.TrimSuffix(strings.TrimRight(base, "/"), "/v1")
	return restAt(ctx, g, "approval", base, method, path, query, body, out)
}

// restAt calls a REST API of the suite (approval's, a gateway's dead letters) at base with the
// approver's bearer token; service names it in errors.
func restAt(ctx context.Context, g *globals, service, base, method, path string, query neturl.Values, body, out any) error {
	if g.token == "" {
		if g.staleState != "" {
			return failure(ExitUnauthorized, txtTokenStale, service, g.staleState)
		}
		return failure(ExitUnauthorized, txtTokenMissing, service)
	}
	if query == nil {
		query = neturl.Values{}
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
	if g.locale != "" {
		req.Header.Set("Accept-Language", g.locale)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return unreachable(service, base, err)
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
		reason := e.Code
		if reason == "" {
			reason = "http_" + strconv.Itoa(res.StatusCode)
		}
		// The message is the service's, in the locale it was asked for.
		return &apiError{code: code, reason: reason, err: texts.New(nil, txtRESTError, oneLine(e.Message, 500), reason, strconv.Itoa(res.StatusCode))}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return failureOver(ExitError, err, txtBadAnswer, service, err.Error())
	}
	return nil
}

// unreachable is a suite service the CLI could not reach at url: not running (the connection
// was refused), or the system's words for why not.
func unreachable(service, url string, err error) error {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return &apiError{code: ExitUnavailable, reason: "unavailable", err: texts.Wrap(nil, err, txtNotRunning, service, url)}
	}
	var ue *neturl.Error
	detail := err
	if errors.As(err, &ue) {
		detail = ue.Err
	}
	return &apiError{code: ExitUnavailable, reason: "unavailable", err: texts.Wrap(nil, err, txtUnreachable, service, url, detail.Error())}
}

// peerError is a failed call to a suite service over Connect: what the service said for the user
// (its LocalizedMessage, asked for in the user's locale), else that it could not be reached,
// else its code and its words. The Connect error stays in the chain (exit codes map it).
func peerError(service, url string, err error) error {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return err
	}
	peer := rpcserver.FromConnect(err)
	reason := ce.Code().String()
	if r := fault.ReasonOf(peer); r != "" {
		reason = strings.ToLower(r)
	}
	exit := codeOf(err)
	if _, ok := fault.Text(peer, ""); ok {
		return &apiError{code: exit, reason: reason, err: peer}
	}
	if ce.Code() == connect.CodeUnavailable {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return &apiError{code: exit, reason: reason, err: texts.Wrap(nil, err, txtNotRunning, service, url)}
		}
		return &apiError{code: exit, reason: reason, err: texts.Wrap(nil, err, txtUnreachable, service, url, ce.Message())}
	}
	return &apiError{code: exit, reason: reason, err: texts.Wrap(nil, err, txtPeerError, service, ce.Code().String(), ce.Message())}
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

// jobArgs checks a command's one argument, a job id, and normalises it.
func jobArgs(_ *cobra.Command, args []string) error {
	if len(args) != 1 {
		return usage(txtArgsJobID)
	}
	if _, err := jobid.Normalize(args[0]); err != nil {
		return &usageError{texts.Wrap(nil, err, txtJobID, strconv.Quote(args[0]))}
	}
	return nil
}

// jobID is the normalised id jobArgs accepted.
func jobID(args []string) string {
	id, _ := jobid.Normalize(args[0])
	return id
}

// jobCompletions completes a job id from the running suite's jobs (pending ones when status is
// "pending"), quietly offering nothing when it cannot be reached.
func jobCompletions(g *globals, status string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 || g.prepare(cmd) != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		q := neturl.Values{"limit": {"50"}}
		if status != "" {
			q.Set("status", status)
		}
		var out struct {
			Jobs []jobJSON `json:"jobs"`
		}
		if err := rest(ctx, g, http.MethodGet, "/v1/jobs", q, nil, &out); err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		comps := make([]cobra.Completion, 0, len(out.Jobs))
		for _, j := range out.Jobs {
			comps = append(comps, cobra.CompletionWithDesc(j.JobID, j.Status+" "+oneLine(j.Summary, 50)))
		}
		return comps, cobra.ShellCompDirectiveNoFileComp
	}
}

// stateAnnotations mark a command that talks to the running suite of the state file.
func stateAnnotations() map[string]string { return map[string]string{annotState: "yes"} }

// jobStates are the states `jobs --status` accepts.
var jobStates = []string{"pending", "granted", "auto_approved", "denied", "expired", "cancelled", "executing", "completed", "failed", "refused"}

func newJobsCmd(g *globals) *cobra.Command {
	var o jobsOptions
	cmd := &cobra.Command{
		Use: "jobs [--status pending|granted|auto_approved|denied|expired|cancelled|executing|completed|failed|refused]", Short: "list approval jobs",
		Args: noArgs, Annotations: stateAnnotations(),
		RunE: func(cmd *cobra.Command, _ []string) error { return runJobs(cmd.Context(), g, o) },
	}
	cmd.Flags().StringVar(&o.status, "status", "", "only jobs in these states (comma separated)")
	cmd.Flags().IntVar(&o.limit, "limit", 50, "at most this many jobs")
	o.output.register(cmd)
	_ = cmd.RegisterFlagCompletionFunc("status", fixedCompletions(jobStates...))
	return cmd
}

type jobsOptions struct {
	status string
	limit  int
	output outputFlag
}

func runJobs(ctx context.Context, g *globals, o jobsOptions) error {
	jsonOut, err := o.output.isJSON()
	if err != nil {
		return err
	}
	q := neturl.Values{"limit": {fmt.Sprint(o.limit)}}
	if o.status != "" {
		q.Set("status", strings.ToLower(o.status))
	}
	var out struct {
		Jobs []jobJSON `json:"jobs"`
	}
	return listREST(ctx, g, "/v1/jobs", q, &out, jsonOut, txtJobsHeader, func() (rows [][]string) {
		for _, j := range out.Jobs {
			rows = append(rows, []string{j.JobID, fault.StateText(g.locale, j.Status), j.Route, j.RequestedAt.Local().Format("01-02 15:04"), oneLine(j.Summary, 60)})
		}
		return rows
	})
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

func newJobCmd(g *globals) *cobra.Command {
	var output outputFlag
	cmd := &cobra.Command{
		Use: "job <job_id>", Short: "show a job and its audit trail",
		Args: jobArgs, Annotations: stateAnnotations(), ValidArgsFunction: jobCompletions(g, ""),
		RunE: func(cmd *cobra.Command, args []string) error { return runJob(cmd.Context(), g, jobID(args), output) },
	}
	output.register(cmd)
	return cmd
}

func runJob(ctx context.Context, g *globals, id string, output outputFlag) error {
	jsonOut, err := output.isJSON()
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
	if jsonOut {
		return json.NewEncoder(g.io.Out).Encode(map[string]any{"job": job, "events": evs.Events, "chain_valid": evs.ChainValid})
	}
	w := g.io.Out
	l := g.locale
	fmt.Fprintf(w, "%s  %s  route=%s task=%s\n", job.JobID, fault.StateText(l, job.Status), job.Route, job.TaskType)
	if job.Summary != "" {
		fmt.Fprintf(w, "%s: %s\n", say(l, txtJobSummary), job.Summary)
	}
	fmt.Fprintln(w, say(l, txtJobFiles, strings.Join(job.AffectedPaths, ", "), strconv.Itoa(job.Stats.Files),
		strconv.Itoa(job.Stats.Additions), strconv.Itoa(job.Stats.Deletions)))
	if len(job.Flags) > 0 {
		fmt.Fprintf(w, "%s: %s\n", say(l, txtJobFlags), strings.Join(job.Flags, ", "))
	}
	reason := job.PolicyReasonText
	if reason == "" {
		reason = job.PolicyReason
	}
	fmt.Fprintf(w, "%s: %s %s\n", say(l, txtJobPolicy), job.PolicyRule, reason)
	if job.DenyReason != "" {
		fmt.Fprintf(w, "%s: %s\n", say(l, txtJobDeny), job.DenyReason)
	}
	fmt.Fprintf(w, "%s: %s\n", say(l, txtJobHash), job.ContentHash)
	trail := txtJobTrailOK
	if !evs.ChainValid {
		trail = txtJobTrailBad
	}
	fmt.Fprintf(w, "\n%s\n", say(l, trail))
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

func newApproveCmd(g *globals) *cobra.Command {
	var noExec bool
	cmd := &cobra.Command{
		Use: "approve <job_id>", Short: "approve a pending job (and ask the executor to run it)",
		Args: jobArgs, Annotations: stateAnnotations(), ValidArgsFunction: jobCompletions(g, "pending"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := jobID(args)
			if err := decide(cmd.Context(), g, id, "approve", struct{}{}); err != nil || noExec {
				return err
			}
			return execute(cmd.Context(), g, id)
		},
	}
	cmd.Flags().BoolVar(&noExec, "no-execute", false, "only record the approval; do not ask the executor to run the job")
	return cmd
}

// decide posts a decision on a job (approve, deny) and prints the job's new status in the
// user's language.
func decide(ctx context.Context, g *globals, id, decision string, body any) error {
	var job jobJSON
	if err := rest(ctx, g, http.MethodPost, "/v1/jobs/"+id+"/"+decision, nil, body, &job); err != nil {
		return err
	}
	fmt.Fprintf(g.io.Out, "%s: %s\n", job.JobID, fault.StateText(g.locale, job.Status))
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
		return executeFailed(g, peerError("executor", g.cfg.Services.Executor.URL, err))
	}
	fmt.Fprintln(g.io.Out, res.GetResultText())
	if !res.GetResult().GetSuccess() {
		return failure(ExitError, txtRanWithFailure)
	}
	return nil
}

// executeFailed is an approved job the executor did not run: its refusal came in the user's
// language (the request named it) and is passed on, with its exit code and stable code.
func executeFailed(g *globals, err error) error {
	return &apiError{code: codeOf(err), reason: errorCode(err), err: texts.Wrap(nil, err, txtExecuteFailed, sayError(err, g.locale))}
}

func newDenyCmd(g *globals) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use: "deny <job_id> [--reason TEXT]", Short: "deny a pending job",
		Args: jobArgs, Annotations: stateAnnotations(), ValidArgsFunction: jobCompletions(g, "pending"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return decide(cmd.Context(), g, jobID(args), "deny", map[string]string{"reason": reason})
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (stored in the audit log)")
	return cmd
}

func newAutoApproveCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auto-approve",
		Short: "turn Auto-Approve on or off, or show it",
		Args:  groupArgs, RunE: groupRun,
	}
	status := &cobra.Command{
		Use: "status", Short: "show the Auto-Approve grant", Args: noArgs, Annotations: stateAnnotations(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return autoApproveCall(cmd.Context(), g, http.MethodGet, nil, nil)
		},
	}
	var offReason string
	off := &cobra.Command{
		Use: "off [--reason TEXT]", Short: "end the Auto-Approve grant", Args: noArgs, Annotations: stateAnnotations(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := neturl.Values{}
			if offReason != "" {
				q.Set("reason", offReason)
			}
			return autoApproveCall(cmd.Context(), g, http.MethodDelete, q, nil)
		},
	}
	off.Flags().StringVar(&offReason, "reason", "", "why")
	var o struct {
		ttl                                       time.Duration
		paths, tasks, routes, denied, ops, reason string
	}
	on := &cobra.Command{
		Use:   "on [--ttl 30m] [--paths docs/,README.md] [--tasks docs,review] [--routes CODE1] [--ops shell] [--reason TEXT]",
		Short: "grant Auto-Approve for a while, within a scope", Args: noArgs, Annotations: stateAnnotations(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			body := map[string]any{
				"task_types": splitList(o.tasks), "routes": splitList(o.routes),
				"path_prefixes": splitList(o.paths), "denied_operations": splitList(o.denied),
				"allowed_operations": splitList(o.ops), "reason": o.reason,
			}
			if o.ttl > 0 {
				body["ttl"] = o.ttl.String()
			}
			return autoApproveCall(cmd.Context(), g, http.MethodPut, nil, body)
		},
	}
	f := on.Flags()
	f.DurationVar(&o.ttl, "ttl", 0, "how long the grant lasts (default: approval.auto_approve.default_ttl; capped by max_ttl)")
	f.StringVar(&o.paths, "paths", "", "allowed path prefixes, comma separated (e.g. docs/,README.md)")
	f.StringVar(&o.tasks, "tasks", "", "allowed task types (design,codegen,review,refactor,ops,docs)")
	f.StringVar(&o.routes, "routes", "", "allowed routes (e.g. CODE1)")
	f.StringVar(&o.denied, "deny-ops", "", "operations never auto-approved (e.g. shell_command)")
	f.StringVar(&o.ops, "ops", "", "operations the grant opts in to: shell (needs --paths too)")
	f.StringVar(&o.reason, "reason", "", "why (stored in the audit log)")
	cmd.AddCommand(on, off, status)
	return cmd
}

// autoApproveCall sends one Auto-Approve request and prints the status it answers with.
func autoApproveCall(ctx context.Context, g *globals, method string, q neturl.Values, body any) error {
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

// listREST reads a list from the REST API into out and prints it: as JSON with -o json, else as a
// table under the header of the text code head with the rows that rows makes.
func listREST(ctx context.Context, g *globals, path string, q neturl.Values, out any, jsonOut bool, head string, rows func() [][]string) error {
	if err := rest(ctx, g, http.MethodGet, path, q, nil, out); err != nil {
		return err
	}
	if jsonOut {
		return json.NewEncoder(g.io.Out).Encode(out)
	}
	return table(g.io.Out, header(g.locale, head), rows())
}
