package e2e

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCrashesKeepAutoApproveOffAndJobIDsUnique runs the compose deployment's state through
// crashes: approval's audit log in Postgres, the Auto-Approve grant cached in Redis and the
// JobID counter in Redis.
//
//   - Auto-Approve switched on over REST, then off by the user in LINE; approval is killed with
//     SIGKILL and Redis hands back the grant as it was while on (a restart from an older
//     snapshot: the key's DUMP restored). After the restart Auto-Approve is still off, for
//     the REST API and for the next job, which asks a person.
//   - gateway-line and chat-mio (the JobID allocators) are killed, every key of the deployment
//     is deleted — what FLUSHALL does to it; the shared test server itself is not flushed —
//     and they are restarted; later every key is deleted again while they run. Each job still
//     gets a new id, above every id the audit log holds for the day, and each job's audit
//     chain is its own.
func TestCrashesKeepAutoApproveOffAndJobIDsUnique(t *testing.T) {
	s := startSuite(t, binDir)
	lc := &lineChat{s: s, t: t}
	ctx := context.Background()
	rdb := s.redis.Client
	grantKey := s.redis.Prefix + "approval:auto_approve"

	first := lc.request("01E2ECRASH000000000000001", codeRequest)

	var grant map[string]any
	s.approvalAPI(t, http.MethodPut, "/v1/auto-approve", map[string]any{"ttl": "30m", "path_prefixes": []string{"docs/"}, "reason": "e2e"}, &grant)
	if grant["active"] != true {
		t.Fatalf("Auto-Approve not on: %v", grant)
	}
	snapshot, err := rdb.Dump(ctx, grantKey).Result()
	if err != nil {
		t.Fatalf("the grant is not cached in Redis: %v", err)
	}
	before := len(s.lineMessages())
	lc.say("01E2ECRASH000000000000002", "/auto-approve off")
	lc.wait("the Auto-Approve off confirmation", before, func(m outMessage) bool { return strings.Contains(m.text(), "Auto-Approve") })

	s.crash(t, "approval")
	if err := rdb.RestoreReplace(ctx, grantKey, 30*time.Minute, snapshot).Err(); err != nil {
		t.Fatal(err)
	}
	s.restart(t, "approval")
	s.approvalAPI(t, http.MethodGet, "/v1/auto-approve", nil, &grant)
	if grant["active"] == true {
		t.Fatalf("Auto-Approve is back on after the crash: %v", grant)
	}
	// The same docs change as the one auto-approved while it was on: now a person decides.
	second := lc.request("01E2ECRASH000000000000003", codeRequest)
	if n, err := rdb.Exists(ctx, grantKey).Result(); err != nil || n != 0 {
		t.Errorf("the stale grant is still cached (%d, %v)", n, err)
	}

	flush := func() {
		t.Helper()
		keys, err := rdb.Keys(ctx, s.redis.Prefix+"*").Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) == 0 || !slices.ContainsFunc(keys, func(k string) bool { return strings.Contains(k, "jobid:") }) {
			t.Fatalf("no JobID counter among the deployment's keys %v", keys)
		}
		if err := rdb.Del(ctx, keys...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	s.crash(t, "gateway-line", "chat-mio")
	flush()
	s.restart(t, "chat-mio", "gateway-line")
	third := lc.request("01E2ECRASH000000000000004", codeRequest)
	flush()
	fourth := lc.request("01E2ECRASH000000000000005", codeRequest)

	jobs := []string{first.job, second.job, third.job, fourth.job}
	last := 0
	for i, job := range jobs {
		n := jobNumber(t, job)
		if n <= last {
			t.Errorf("job %d is %s, not above the %d before it (jobs %v)", i+1, job, last, jobs)
		}
		last = n
		s.assertAudit(t, job, "requested")
	}
	s.noProblems(t)
}

// jobNumber is the day's sequence number of a counter-allocated JobID (job_YYYYMMDD_NNN).
func jobNumber(t *testing.T, job string) int {
	t.Helper()
	parts := strings.Split(job, "_")
	n, err := strconv.Atoi(parts[len(parts)-1])
	if err != nil || len(parts) != 3 {
		t.Fatalf("%s is not a counter JobID (the fallback form means the counter was unusable)", job)
	}
	return n
}
