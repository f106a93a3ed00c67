package e2e

import (
	"context"

	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	heartbeatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/heartbeat/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/heartbeat/v1/heartbeatv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"

	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// connectCall makes a unary Connect call (JSON) with the given headers and body and returns the
// HTTP status and the Connect error code ("" on success).
func connectCall(t *testing.T, url string, headers map[string]string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	client := &http.Client{Timeout: 60 * time.Second}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	if res.StatusCode == http.StatusOK {
		return res.StatusCode, ""
	}
	var e struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(data, &e)
	return res.StatusCode, e.Code
}

// proof is what an identity sends: its service token for the target and, when it can vouch for a
// channel's users (or the call must act for one), a principal assertion.
func proof(t *testing.T, caller, target string, principal bool) map[string]string {
	t.Helper()
	c := testinfra.Credentials(t, caller)
	tok, err := c.ServiceToken(target, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	h := map[string]string{svcauth.ServiceTokenHeader: tok}
	if principal {
		ch := voucherChannel(caller)
		h[svcauth.PrincipalHeader] = vouch(t, ch, approverOn(ch))
	}
	return h
}

// approverOn is the suite's approver on a channel (see suiteConfig).
func approverOn(channel string) string {
	return map[string]string{"line": lineUser, "slack": slackUser, "cli": cliUser}[channel]
}

// voucherChannel is the channel a caller vouches for (its own, for the gateways and the terminal;
// line for a forwarder such as chat-mio).
func voucherChannel(caller string) string {
	for _, ch := range []string{"line", "slack", "cli"} {
		if v, _ := svcauth.VoucherFor(ch); v == caller {
			return ch
		}
	}
	return "line"
}

func vouch(t *testing.T, channel, user string) string {
	t.Helper()
	v, ok := svcauth.VoucherFor(channel)
	if !ok {
		t.Fatalf("no voucher for %s", channel)
	}
	a, err := testinfra.Credentials(t, v).Vouch(channel, user, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// requestBody names the sender where the procedure reads one, so an allowed call is judged on
// its identity and nothing else.
func requestBody(procedure, caller string) string {
	if strings.HasSuffix(procedure, "/HandleMessage") {
		ch := voucherChannel(caller)
		return fmt.Sprintf(`{"sessionId":"%[1]s:%[2]s","channel":"%[1]s","userId":"%[2]s","text":"/help"}`, ch, approverOn(ch))
	}
	return "{}"
}

// TestAuthorizationMatrixAgainstTheRealBinaries runs the eight binaries and calls every
// procedure of the matrix on every server that serves it, as every identity of the suite and as
// nobody: the allowed cells pass the interceptor, every other cell is refused.
func TestAuthorizationMatrixAgainstTheRealBinaries(t *testing.T) {
	s := startSuite(t, binDir)
	defer s.stop(t)
	cells := 0
	for _, rule := range svcauth.Matrix() {
		for _, server := range rule.Servers {
			addr, ok := s.addrs[server]
			if !ok {
				continue // the terminal's notification endpoint is not part of this suite
			}
			url := "http://" + addr + rule.Procedure
			if strings.HasSuffix(rule.Procedure, "/Watch") {
				cells += watchCells(t, "http://"+addr, rule)
				continue
			}
			// Nobody: no token at all, a token for another service, a forged signature.
			if _, code := connectCall(t, url, nil, "{}"); code != "unauthenticated" {
				t.Errorf("%s on %s without a token: %q, want unauthenticated", rule.Procedure, server, code)
			}
			other := svcauth.Executor
			if server == svcauth.Executor {
				other = svcauth.Approval
			}
			misaddressed := proof(t, rule.Callers[0], other, false)
			if _, code := connectCall(t, url, misaddressed, "{}"); code != "unauthenticated" {
				t.Errorf("%s on %s with a token made out to %s: %q, want unauthenticated", rule.Procedure, server, other, code)
			}
			forged := proof(t, rule.Callers[0], server, false)
			forged[svcauth.ServiceTokenHeader] = forged[svcauth.ServiceTokenHeader][:len(forged[svcauth.ServiceTokenHeader])-6] + "AAAAAA"
			if _, code := connectCall(t, url, forged, "{}"); code != "unauthenticated" {
				t.Errorf("%s on %s with a forged signature: %q, want unauthenticated", rule.Procedure, server, code)
			}
			for _, caller := range svcauth.Identities() {
				cells++
				allowed := slices.Contains(rule.Callers, caller)
				_, code := connectCall(t, url, proof(t, caller, server, rule.Principal), requestBody(rule.Procedure, caller))
				switch {
				case allowed && (code == "unauthenticated" || code == "permission_denied"):
					t.Errorf("%s on %s as %s (allowed): refused with %q", rule.Procedure, server, caller, code)
				case !allowed && code != "permission_denied":
					t.Errorf("%s on %s as %s (not allowed): %q, want permission_denied", rule.Procedure, server, caller, code)
				}
				if allowed && rule.Principal {
					// The same allowed caller without the user it acts for is refused.
					if _, code := connectCall(t, url, proof(t, caller, server, false), requestBody(rule.Procedure, caller)); code != "permission_denied" {
						t.Errorf("%s on %s as %s without a principal: %q, want permission_denied", rule.Procedure, server, caller, code)
					}
				}
			}
		}
	}
	t.Logf("%d matrix cells exercised", cells)
	if cells < 150 {
		t.Fatalf("only %d cells: the matrix or the suite shrank", cells)
	}
}

// watchCells checks the server stream Watch as every identity and as nobody.
func watchCells(t *testing.T, base string, rule svcauth.Rule) int {
	t.Helper()
	open := func(h map[string]string) connect.Code {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		c := heartbeatv1connect.NewHeartbeatServiceClient(rpcserver.NewHTTPClient(), base, connect.WithInterceptors(headerSetter(h)))
		stream, err := c.Watch(ctx, &heartbeatv1.WatchRequest{})
		if err != nil {
			return connect.CodeOf(err)
		}
		defer stream.Close()
		if stream.Receive() {
			return 0
		}
		if ctx.Err() != nil {
			return 0 // open and waiting: let through
		}
		return connect.CodeOf(stream.Err())
	}
	if code := open(nil); code != connect.CodeUnauthenticated {
		t.Errorf("Watch without a token: %v", code)
	}
	for _, caller := range svcauth.Identities() {
		code := open(proof(t, caller, svcauth.Heartbeat, false))
		allowed := slices.Contains(rule.Callers, caller)
		if allowed && (code == connect.CodeUnauthenticated || code == connect.CodePermissionDenied) {
			t.Errorf("Watch as %s (allowed): %v", caller, code)
		}
		if !allowed && code != connect.CodePermissionDenied {
			t.Errorf("Watch as %s (not allowed): %v, want permission_denied", caller, code)
		}
	}
	return len(svcauth.Identities())
}

type headerSetter map[string]string

func (h headerSetter) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc { return next }
func (h headerSetter) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		for k, v := range h {
			conn.RequestHeader().Set(k, v)
		}
		return conn
	}
}
func (h headerSetter) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// TestTrustBoundaryAsAnAttacker tries the concrete attacks: a forged approver, an executor that
// decides, chat-mio claiming, pushes through the public port, REST without a token.
func TestTrustBoundaryAsAnAttacker(t *testing.T) {
	s := startSuite(t, binDir)
	defer s.stop(t)
	approvalURL := func(m string) string { return s.url("approval", "/picoclaw.approval.v1.ApprovalService/"+m) }

	// A pending job requested by chat-mio for a verified user.
	id := "job_20261125_901"
	req := fmt.Sprintf(`{"proposal":{"jobId":%q,"plan":"docs","patch":"[{\"type\":\"file_edit\",\"action\":\"create\",\"target\":\"docs/x.md\",\"content\":\"x\"}]"},"sessionId":"line:%s","channel":"line","requestedBy":{"id":%q,"channel":"line"}}`, id, lineUser, lineUser)
	h := proof(t, svcauth.ChatMio, svcauth.Approval, false)
	h[svcauth.PrincipalHeader] = vouch(t, "line", lineUser)
	if status, code := connectCall(t, approvalURL("RequestApproval"), h, req); code != "" {
		t.Fatalf("request approval: %d %s", status, code)
	}

	for _, tc := range []struct {
		name    string
		caller  string
		user    string // the principal sent ("" = none)
		method  string
		body    string
		want    string
		channel string
	}{
		{"chat-mio forging the approver in the body", svcauth.ChatMio, "Ustranger", "Approve",
			fmt.Sprintf(`{"jobId":%q,"actor":{"id":%q,"channel":"line"}}`, id, lineUser), "permission_denied", "line"},
		{"chat-mio approving with no verified user", svcauth.ChatMio, "", "Approve",
			fmt.Sprintf(`{"jobId":%q,"actor":{"id":%q,"channel":"line"}}`, id, lineUser), "permission_denied", "line"},
		{"a verified non-approver", svcauth.ChatMio, "Ustranger", "Approve", fmt.Sprintf(`{"jobId":%q}`, id), "permission_denied", "line"},
		{"the executor deciding", svcauth.Executor, lineUser, "Approve", fmt.Sprintf(`{"jobId":%q}`, id), "permission_denied", "line"},
		{"the executor switching Auto-Approve on", svcauth.Executor, lineUser, "SetAutoApprove", `{"ttl":"600s"}`, "permission_denied", "line"},
		{"chat-mio claiming", svcauth.ChatMio, "", "ClaimJob", fmt.Sprintf(`{"jobId":%q,"executorId":"x"}`, id), "permission_denied", ""},
		{"router-shiro reporting", svcauth.RouterShiro, "", "ReportExecution", fmt.Sprintf(`{"jobId":%q}`, id), "permission_denied", ""},
		{"a slack assertion for a line user", svcauth.ChatMio, "", "Approve", fmt.Sprintf(`{"jobId":%q,"actor":{"id":%q,"channel":"line"}}`, id, lineUser), "permission_denied", "slack"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := proof(t, tc.caller, svcauth.Approval, false)
			switch {
			case tc.user != "":
				h[svcauth.PrincipalHeader] = vouch(t, tc.channel, tc.user)
			case tc.channel == "slack":
				h[svcauth.PrincipalHeader] = vouch(t, "slack", lineUser)
			}
			if _, code := connectCall(t, approvalURL(tc.method), h, tc.body); code != tc.want {
				t.Fatalf("%s: %q, want %q", tc.method, code, tc.want)
			}
		})
	}
	// The job is still pending: nothing above decided it.
	var job map[string]any
	s.approvalAPI(t, http.MethodGet, "/v1/jobs/"+id, nil, &job)
	if job["status"] != "pending" {
		t.Fatalf("job after the attacks: %v", job["status"])
	}

	// The gateways' public listeners serve the webhook and health only: no Push, no metrics.
	for _, gw := range []string{"gateway-line", "gateway-slack"} {
		for _, path := range []string{"/picoclaw.gateway.v1.NotificationService/Push", "/metrics", "/picoclaw.approval.v1.ApprovalService/Approve"} {
			status, _ := connectCall(t, s.publicURL(gw, path), proof(t, svcauth.ChatMio, gw, false), `{"sessionId":"line:`+lineUser+`","text":"phish"}`)
			if status != http.StatusNotFound && status != http.StatusMethodNotAllowed {
				t.Errorf("%s public %s: %d, want 404/405", gw, path, status)
			}
		}
		// On the internal listener, Push without a token is refused too.
		if _, code := connectCall(t, s.url(gw, "/picoclaw.gateway.v1.NotificationService/Push"), nil, `{"sessionId":"line:`+lineUser+`","text":"phish"}`); code != "unauthenticated" {
			t.Errorf("%s internal Push without a token: %q", gw, code)
		}
	}
	// REST without a token is 401; an unknown token is refused (403 unknown_approver, audited).
	for _, tok := range []string{"", "wrong-token-0123456789abcdefghijklmnop"} {
		r, _ := http.NewRequest(http.MethodPost, s.publicURL("approval", "/v1/jobs/"+id+"/approve"), bytes.NewReader(nil))
		if tok != "" {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if want := map[bool]int{true: http.StatusUnauthorized, false: http.StatusForbidden}[tok == ""]; res.StatusCode != want {
			t.Errorf("REST approve with token %q: %d, want %d", tok, res.StatusCode, want)
		}
	}
	s.approvalAPI(t, http.MethodGet, "/v1/jobs/"+id, nil, &job)
	if job["status"] != "pending" {
		t.Fatalf("job after the REST attempts: %v", job["status"])
	}
}

// TestServicesRefuseToStartOpen: every binary without its key, or with a placeholder secret,
// exits non-zero and names the variable, also when asked to listen on every interface.
func TestServicesRefuseToStartOpen(t *testing.T) {
	_, env, _ := suiteEnv(t, t.TempDir())
	run := func(t *testing.T, name string, env []string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(binDir, name))
		cmd.Env = env
		cmd.Dir = ".."
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		done := make(chan error, 1)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err == nil {
				t.Fatalf("%s started and exited 0:\n%s", name, out.String())
			}
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("%s kept running:\n%s", name, out.String())
		}
		return out.String()
	}
	for _, name := range services {
		t.Run(name+" without a key on 0.0.0.0", func(t *testing.T) {
			e := append(slices.Clip(env), fmt.Sprintf("PICOCLAW_SERVICES_%s_LISTEN=0.0.0.0:0", envKey(name)),
				"PICOCLAW_AUTH_PUBLIC_KEYS="+strings.Join(testinfra.TestPublicKeys(), ","), "PICOCLAW_SERVICE_KEY=")
			if out := run(t, name, e); !strings.Contains(out, "PICOCLAW_SERVICE_KEY") {
				t.Fatalf("the error does not name PICOCLAW_SERVICE_KEY:\n%s", out)
			}
		})
		t.Run(name+" with a placeholder key", func(t *testing.T) {
			e := append(identityEnv(env, name), "PICOCLAW_SERVICE_KEY=change-me")
			if out := run(t, name, e); !strings.Contains(out, "PICOCLAW_SERVICE_KEY") {
				t.Fatalf("the error does not name PICOCLAW_SERVICE_KEY:\n%s", out)
			}
		})
	}
	for _, tc := range []struct{ service, variable, value string }{
		{"gateway-line", "LINE_CHANNEL_SECRET", "replace-with-channel-secret"},
		{"gateway-line", "LINE_CHANNEL_ACCESS_TOKEN", "short-token"},
		{"gateway-slack", "SLACK_SIGNING_SECRET", "replace-with-signing-secret"},
		{"gateway-slack", "SLACK_BOT_TOKEN", "xoxb-replace-me"},
		{"approval", "PICOCLAW_APPROVAL_TOKENS", "admin:replace-with-a-long-random-token"},
		{"gateway-line", "PICOCLAW_APPROVAL_TOKENS", "admin:replace-with-a-long-random-token"},
		{"approval", "PICOCLAW_AUDIT_KEY", "change-me-change-me-change-me-change-me"},
	} {
		t.Run(tc.service+" with "+tc.variable+"="+tc.value, func(t *testing.T) {
			e := append(identityEnv(env, tc.service), tc.variable+"="+tc.value)
			out := run(t, tc.service, e)
			if !strings.Contains(out, tc.variable) {
				t.Fatalf("the error does not name %s:\n%s", tc.variable, out)
			}
			if strings.Contains(out, tc.value) {
				t.Fatalf("the error shows the secret's value:\n%s", out)
			}
		})
	}
}
