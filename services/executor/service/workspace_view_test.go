package service

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"connectrpc.com/connect"

	executorv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1/executorv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// viewClient calls the executor's WorkspaceService as identity.
func viewClient(t testing.TB, s *suite, identity string, opts ...connect.ClientOption) executorv1connect.WorkspaceServiceClient {
	t.Helper()
	hc := rpcserver.NewHTTPClient()
	t.Cleanup(hc.CloseIdleConnections)
	url := strings.TrimSuffix(s.baseURL, "/")
	return executorv1connect.NewWorkspaceServiceClient(hc, url,
		append(opts, svcauth.Client(testinfra.Credentials(t, identity), svcauth.Executor))...)
}

func TestWorkspaceViewOverRPC(t *testing.T) {
	s := start(t, nil)
	files := map[string]string{
		"calc.go":    "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
		".env":       "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123\n",
		".gitignore": "*.log\n",
		"debug.log":  "noise\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(s.ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		t.Helper()
		c := exec.Command("git", args...)
		c.Dir = s.ws
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	git("add", "calc.go", ".gitignore")
	git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "add calc")
	git("remote", "add", "origin", "https://user:hunter2secret@example.invalid/calc.git")
	if err := os.WriteFile(filepath.Join(s.ws, "calc.go"), []byte("package calc\n\nfunc Add(a, b int) int { return b + a }\n\nfunc Sub(a, b int) int { return a - b }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.ws, "new.go"), []byte("package calc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const job = "job_20260101_201"
	for _, tc := range []struct {
		name string
		opts []connect.ClientOption
	}{{"connect", nil}, {"grpc", []connect.ClientOption{connect.WithGRPC()}}} {
		t.Run(tc.name, func(t *testing.T) {
			for _, id := range []string{svcauth.CoderOrder, svcauth.RouterShiro} {
				c := viewClient(t, s, id, tc.opts...)
				tree, err := c.ListTree(ctx, &executorv1.ListTreeRequest{JobId: job})
				if err != nil {
					t.Fatalf("%s ListTree: %v", id, err)
				}
				var got []string
				for _, e := range tree.GetEntries() {
					got = append(got, e.GetPath())
				}
				if strings.Join(got, ",") != ".gitignore,calc.go,new.go" || tree.GetWithheld() != 1 {
					t.Errorf("%s tree = %v withheld %d", id, got, tree.GetWithheld())
				}
			}
			c := viewClient(t, s, svcauth.CoderOrder, tc.opts...)
			f, err := c.ReadFile(ctx, &executorv1.ReadFileRequest{JobId: job, Path: "calc.go"})
			if err != nil || !strings.Contains(f.GetContent(), "func Sub") || len(f.GetSha256()) != 64 {
				t.Fatalf("ReadFile = %v, %v", f, err)
			}
			if _, err := c.ReadFile(ctx, &executorv1.ReadFileRequest{JobId: job, Path: ".env"}); codeOf(err) != connect.CodePermissionDenied {
				t.Errorf(".env: %v", err)
			}
			sr, err := c.Search(ctx, &executorv1.SearchRequest{JobId: job, Query: `func \w+\(`, Regexp: true})
			if err != nil || len(sr.GetMatches()) != 2 {
				t.Errorf("Search = %v, %v", sr, err)
			}
			st, err := c.GitStatus(ctx, &executorv1.GitStatusRequest{JobId: job})
			if err != nil {
				t.Fatal(err)
			}
			var status []string
			for _, e := range st.GetEntries() {
				status = append(status, e.GetStatus()+" "+e.GetPath())
			}
			if st.GetBranch() != "main" || strings.Join(status, ",") != " M calc.go,?? new.go" {
				t.Errorf("GitStatus = %q %q", st.GetBranch(), status)
			}
			lg, err := c.GitLog(ctx, &executorv1.GitLogRequest{JobId: job})
			if err != nil || len(lg.GetCommits()) != 1 || lg.GetCommits()[0].GetSubject() != "add calc" {
				t.Errorf("GitLog = %v, %v", lg, err)
			}
			ds, err := c.DiffSummary(ctx, &executorv1.DiffSummaryRequest{JobId: job})
			if err != nil || len(ds.GetFiles()) != 1 || ds.GetFiles()[0].GetAdditions() != 3 || ds.GetFiles()[0].GetDeletions() != 1 {
				t.Errorf("DiffSummary = %v, %v", ds, err)
			}
			rm, err := c.Remotes(ctx, &executorv1.RemotesRequest{JobId: job})
			if err != nil || len(rm.GetRemotes()) != 1 || rm.GetRemotes()[0].GetUrl() != "https://example.invalid/calc.git" {
				t.Errorf("Remotes = %v, %v", rm, err)
			}
		})
	}
	// Only the coders and the worker may look.
	for _, id := range []string{svcauth.ChatMio, svcauth.Approval, svcauth.GatewayLine, svcauth.CLI} {
		_, err := viewClient(t, s, id).ReadFile(ctx, &executorv1.ReadFileRequest{JobId: job, Path: "calc.go"})
		if codeOf(err) != connect.CodePermissionDenied {
			t.Errorf("%s: %v, want PermissionDenied", id, err)
		}
	}
	// Every read is logged with the job id; no content and no secret reaches the log.
	reads := 0
	for _, rec := range s.logs.Records() {
		if rec["msg"] == "executor.workspace_read" {
			reads++
			if rec["job_id"] != job {
				t.Errorf("read logged without the job id: %v", rec)
			}
		}
	}
	if reads < 16 {
		t.Errorf("%d reads logged", reads)
	}
	if logs := s.logs.String(); strings.Contains(logs, "hunter2secret") || strings.Contains(logs, "sk-proj-abc") || strings.Contains(logs, "return b + a") {
		t.Error("the log holds workspace content or a secret")
	}
}

// Over RPC, a listing can carry a search of the same walk (what a context pack asks).
func TestListTreeWithSearchOverRPC(t *testing.T) {
	s := start(t, nil)
	if err := os.WriteFile(filepath.Join(s.ws, "calc.go"), []byte("package calc\n\nfunc Add(a, b int) int { return a + b }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := viewClient(t, s, svcauth.CoderOrder)
	res, err := c.ListTree(context.Background(), &executorv1.ListTreeRequest{JobId: "job_20260101_202",
		Search: &executorv1.SearchRequest{Query: `\bAdd\b`, Regexp: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.GetEntries()) != 1 || len(res.GetSearch().GetMatches()) != 1 || res.GetSearch().GetMatches()[0].GetLine() != 3 {
		t.Fatalf("entries %v search %v", res.GetEntries(), res.GetSearch())
	}
}
