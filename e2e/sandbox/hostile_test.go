package sandbox_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
)

type op map[string]any

func shell(line string) op { return op{"type": "shell_command", "action": "run", "target": line} }

func gitOp(action, target string, meta map[string]string) op {
	o := op{"type": "git_operation", "action": action, "target": target}
	if meta != nil {
		o["metadata"] = meta
	}
	return o
}

func fileOp(action, target, content string) op {
	return op{"type": "file_edit", "action": action, "target": target, "content": content}
}

func patchOf(t *testing.T, ops ...op) string {
	b, err := json.Marshal(ops)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// hostile is one attempt to get out of the sandbox.
type hostile struct {
	name  string
	setup func(t *testing.T, s *stack)
	ops   func(s *stack) []op
	// marks are command lines of daemons the case starts: none may run after the job.
	marks []string
	// absent are paths (relative to the workspace, or absolute) that must not exist after.
	absent []string
	// failed: the case's last operation must have failed.
	failed bool
	// notIn are strings that must appear in no output.
	notIn func(s *stack) []string
	check func(t *testing.T, s *stack, r *commonv1.ExecutionResult)
}

// connected is printed by a command that got through; commands print it as echoEscaped, so
// the command line itself (which results quote) never contains it.
const (
	connected   = "SANDBOX-ESCAPED"
	echoEscaped = "echo SANDBOX-''ESCAPED"
)

// gitRepo makes the workspace a repository with one commit, as an earlier job would have.
func gitRepo(t *testing.T, s *stack) {
	t.Helper()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "--allow-empty", "-m", "init"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = s.ws
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=safe.directory", "GIT_CONFIG_VALUE_0=*")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
}

func appendGitConfig(t *testing.T, s *stack, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(s.ws, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

func plant(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// commitOps adds and commits a new file through git operations.
func commitOps(file string) []op {
	return []op{fileOp("create", file, "hello\n"), gitOp("add", file, nil), gitOp("commit", "", map[string]string{"message": "add " + file})}
}

func hostileCases() []hostile {
	return []hostile{
		// Secrets through /proc and the environment.
		{name: "read the executor's environ", failed: true,
			ops: func(s *stack) []op { return []op{shell(fmt.Sprintf("cat /proc/%d/environ", s.execPid))} }},
		{name: "read the executor's cmdline and status", failed: true,
			ops: func(s *stack) []op {
				return []op{shell(fmt.Sprintf("cat /proc/%d/cmdline /proc/%d/status", s.execPid, s.execPid))}
			}},
		{name: "read pid 1 environ", ops: func(*stack) []op { return []op{shell(`tr '\0' '\n' < /proc/1/environ; echo; cat /proc/1/cmdline`)} }},
		{name: "read every environ", ops: func(*stack) []op {
			return []op{shell(`for f in /proc/[0-9]*/environ; do echo "$f"; tr '\0' '\n' < "$f"; done`)}
		}},
		{name: "print the environment", ops: func(*stack) []op {
			return []op{shell(`env; echo "token=$PICOCLAW_SERVICE_KEY key=$OPENAI_API_KEY"`)}
		}},
		{name: "list processes",
			ops:   func(*stack) []op { return []op{shell("ps -eo pid,args")} },
			notIn: func(*stack) []string { return []string{binDir, "approval", "/executor"} }},
		{name: "kill the executor", failed: true,
			ops: func(s *stack) []op { return []op{shell(fmt.Sprintf("kill -9 %d", s.execPid))} },
			check: func(t *testing.T, s *stack, _ *commonv1.ExecutionResult) {
				if err := syscall.Kill(s.execPid, 0); err != nil {
					t.Errorf("executor is gone: %v", err)
				}
			}},
		// Secrets in files outside the workspace.
		{name: "read the state directory", failed: true,
			ops: func(s *stack) []op {
				return []op{shell("ls -la " + s.stateDir + "; cat " + s.stateDir + "/session.db")}
			}},
		{name: "read the credentials file", failed: true,
			ops: func(s *stack) []op { return []op{shell("cat " + s.home + "/.picoclaw/credentials")} }},
		{name: "read the config file", failed: true,
			ops: func(s *stack) []op { return []op{shell("cat " + s.cfgPath)} }},
		{name: "read through a symlink", failed: true,
			ops: func(s *stack) []op { return []op{shell("ln -s " + s.stateDir + "/session.db stolen && cat stolen")} }},
		{name: "read /etc/shadow", failed: true, ops: func(*stack) []op { return []op{shell("cat /etc/shadow")} }},
		{name: "nested user namespace", failed: true,
			ops: func(s *stack) []op { return []op{shell("unshare -Ur cat " + s.stateDir + "/session.db")} }},
		{name: "nested namespace mounts a new /proc", failed: true,
			ops: func(s *stack) []op {
				return []op{shell(fmt.Sprintf("unshare -Urm --fork sh -c 'mount -t proc proc /proc && cat /proc/%d/environ'", s.execPid))}
			}},
		// Writes outside the workspace.
		// The workspace's parent is below /tmp here: the write lands in the command's private
		// /tmp, and the host's file stays as it was.
		{name: "write next to the workspace",
			ops: func(s *stack) []op { return []op{shell("echo pwned > " + filepath.Join(s.base, "outside.txt"))} },
			check: func(t *testing.T, s *stack, _ *commonv1.ExecutionResult) {
				if b, _ := os.ReadFile(filepath.Join(s.base, "outside.txt")); string(b) != "outside\n" {
					t.Errorf("outside.txt = %q", b)
				}
			}},
		{name: "write to the host's /tmp", ops: func(*stack) []op { return []op{shell("echo pwned > /tmp/picoclaw-sbx-escape")} },
			absent: []string{"/tmp/picoclaw-sbx-escape"}},
		{name: "write to /etc", failed: true, ops: func(*stack) []op { return []op{shell("echo pwned > /etc/picoclaw-sbx-escape")} },
			absent: []string{"/etc/picoclaw-sbx-escape"}},
		// Redis, Postgres, the suite's own ports, local servers.
		{name: "redis over TCP", ops: func(s *stack) []op {
			return []op{shell(fmt.Sprintf("exec 3<>/dev/tcp/%s && printf 'PING\\r\\n' >&3 && timeout 2 head -c 7 <&3 && %s", hostPortPath(s.redisAddr), echoEscaped))}
		}, failed: true, notIn: func(*stack) []string { return []string{"PONG"} }},
		{name: "redis-cli", ops: func(s *stack) []op {
			h, p, _ := net.SplitHostPort(s.redisAddr)
			return []op{shell(fmt.Sprintf("redis-cli -h %s -p %s ping", h, p))}
		}, notIn: func(*stack) []string { return []string{"PONG"} }},
		{name: "postgres over TCP", failed: true, ops: func(s *stack) []op {
			return []op{shell(fmt.Sprintf("exec 3<>/dev/tcp/%s && %s", hostPortPath(s.pgAddr), echoEscaped))}
		}},
		{name: "postgres with psql", ops: func(s *stack) []op {
			h, p, _ := net.SplitHostPort(s.pgAddr)
			return []op{shell(fmt.Sprintf("psql 'host=%s port=%s user=postgres dbname=test connect_timeout=2' -Atc \"select 'SANDBOX'||'-ESCAPED'\"", h, p))}
		}},
		{name: "postgres over its Unix socket", failed: true, ops: func(*stack) []op {
			return []op{shell("ls -la /var/run/postgresql /run/postgresql; socat -u UNIX-CONNECT:/var/run/postgresql/.s.PGSQL.5432 /dev/null </dev/null && " + echoEscaped)}
		}, check: func(t *testing.T, _ *stack, _ *commonv1.ExecutionResult) {
			if _, err := os.Stat("/var/run/postgresql/.s.PGSQL.5432"); err != nil {
				t.Logf("note: the host has no Postgres socket here (%v); the attempt proves less", err)
			}
		}},
		{name: "psql over the Unix socket", ops: func(*stack) []op {
			return []op{shell("psql -h /var/run/postgresql -U postgres -d test -Atc \"select 'SANDBOX'||'-ESCAPED'\"")}
		}},
		{name: "the executor's own RPC port", failed: true, ops: func(s *stack) []op {
			return []op{shell(fmt.Sprintf("curl -sS -m 3 http://%s/healthz && %s", s.addrs["executor"], echoEscaped))}
		}},
		{name: "the approval service's RPC port", failed: true, ops: func(s *stack) []op {
			return []op{shell(fmt.Sprintf("curl -sS -m 3 -X POST -H 'Content-Type: application/json' -d '{}' http://%s/picoclaw.approval.v1.ApprovalService/ListJobs && %s", s.addrs["approval"], echoEscaped))}
		}},
		{name: "curl a local HTTP server", failed: true, ops: func(s *stack) []op {
			_, p, _ := net.SplitHostPort(s.httpAddr)
			return []op{shell(fmt.Sprintf("curl -sS -m 3 http://127.0.0.1:%s/ && %s", p, echoEscaped))}
		}},
		{name: "bash /dev/tcp to a local HTTP server", failed: true, ops: func(s *stack) []op {
			_, p, _ := net.SplitHostPort(s.httpAddr)
			return []op{shell(fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%s && printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3", p))}
		}},
		{name: "the host's own address", failed: true, ops: func(s *stack) []op {
			_, p, _ := net.SplitHostPort(s.httpAddr)
			return []op{shell(fmt.Sprintf("curl -sS -m 3 http://%s:%s/ && %s", hostIP(), p, echoEscaped))}
		}},
		{name: "abstract Unix socket", failed: true,
			setup: func(t *testing.T, s *stack) { listenAbstract(t, s) },
			ops: func(s *stack) []op {
				return []op{shell("socat -u ABSTRACT-CONNECT:" + abstractName(s) + " /dev/null </dev/null && " + echoEscaped)}
			}},
		// Processes that try to outlive the job.
		{name: "fork bomb", ops: func(*stack) []op {
			return []op{shell(`timeout -s KILL 3 bash -c 'bomb(){ bomb | bomb & }; bomb; wait'; echo finished`)}
		}, check: func(t *testing.T, s *stack, r *commonv1.ExecutionResult) {
			t.Logf("fork bomb ended: %s, exit %d", r.GetCommands()[0].GetExitReason(), r.GetCommands()[0].GetExitCode())
		}},
		{name: "setsid daemon", marks: []string{"sleep 7301"},
			ops: func(*stack) []op { return []op{shell("setsid sleep 7301 & echo $! > setsid.pid")} }},
		{name: "setsid --fork daemon", marks: []string{"sleep 7302"},
			ops: func(*stack) []op {
				return []op{shell(`setsid -f bash -c 'echo $$ > daemon.pid; exec sleep 7302'; while [ ! -s daemon.pid ]; do sleep 0.05; done; echo started`)}
			}},
		{name: "double fork", marks: []string{"sleep 7303"},
			ops: func(*stack) []op { return []op{shell("( (sleep 7303 & echo $! > dbl.pid) & ); echo ok")} }},
		{name: "nohup in the background", marks: []string{"sleep 7304"},
			ops: func(*stack) []op { return []op{shell("nohup sleep 7304 >/dev/null 2>&1 & echo $! > nohup.pid")} }},
		{name: "daemon ignoring signals", marks: []string{"picoclaw-sbx-daemon"},
			ops: func(*stack) []op {
				return []op{shell("(trap '' TERM HUP INT; exec -a picoclaw-sbx-daemon sleep 7305) & disown; echo $! > ign.pid")}
			}},
		{name: "file size limit", failed: true,
			ops: func(*stack) []op { return []op{shell("exec head -c 100000000 /dev/zero > big.bin")} },
			check: func(t *testing.T, s *stack, r *commonv1.ExecutionResult) {
				c := r.GetCommands()[0]
				if c.GetExitReason() != "limit" || c.GetSignal() != "SIGXFSZ" {
					t.Errorf("exit reason %q signal %q, want limit SIGXFSZ", c.GetExitReason(), c.GetSignal())
				}
				if fi, err := os.Stat(filepath.Join(s.ws, "big.bin")); err == nil && fi.Size() > 16<<20 {
					t.Errorf("big.bin is %d bytes", fi.Size())
				}
			}},
		// Git without side doors.
		{name: "git with planted hooks", absent: []string{"hook-marker"},
			setup: func(t *testing.T, s *stack) {
				gitRepo(t, s)
				for _, h := range []string{"pre-commit", "commit-msg", "post-commit", "post-index-change", "reference-transaction"} {
					plant(t, filepath.Join(s.ws, ".git", "hooks", h), "#!/bin/sh\ntouch "+s.ws+"/hook-marker\n", 0o755)
				}
			},
			ops: func(*stack) []op { return commitOps("hooked.txt") }, check: committed("hooked.txt")},
		{name: "git with planted core.hooksPath", absent: []string{"hookspath-marker"},
			setup: func(t *testing.T, s *stack) {
				gitRepo(t, s)
				plant(t, filepath.Join(s.ws, "myhooks", "pre-commit"), "#!/bin/sh\ntouch "+s.ws+"/hookspath-marker\n", 0o755)
				appendGitConfig(t, s, "[core]\n\thooksPath = myhooks\n")
			},
			ops: func(*stack) []op { return commitOps("hp.txt") }, check: committed("hp.txt")},
		{name: "git with planted core.fsmonitor", absent: []string{"fsmonitor-marker"},
			setup: func(t *testing.T, s *stack) {
				gitRepo(t, s)
				appendGitConfig(t, s, "[core]\n\tfsmonitor = touch "+s.ws+"/fsmonitor-marker; false\n")
			},
			ops: func(*stack) []op { return commitOps("fsm.txt") }, check: committed("fsm.txt")},
		{name: "git with planted filter", absent: []string{"filter-marker"},
			setup: func(t *testing.T, s *stack) {
				gitRepo(t, s)
				plant(t, filepath.Join(s.ws, ".gitattributes"), "*.txt filter=evil diff=evil\n", 0o644)
				appendGitConfig(t, s, "[filter \"evil\"]\n\tclean = touch "+s.ws+"/filter-marker; cat\n\tsmudge = touch "+s.ws+"/filter-marker; cat\n\tprocess = touch "+s.ws+"/filter-marker\n[diff \"evil\"]\n\ttextconv = touch "+s.ws+"/filter-marker; cat\n")
			},
			ops: func(*stack) []op { return commitOps("filtered.txt") }, check: committed("filtered.txt")},
		{name: "git with planted include.path", absent: []string{"include-marker"}, failed: true,
			setup: func(t *testing.T, s *stack) {
				gitRepo(t, s)
				plant(t, filepath.Join(s.ws, "evil.gitconfig"), "[core]\n\tfsmonitor = touch "+s.ws+"/include-marker; false\n", 0o644)
				appendGitConfig(t, s, "[include]\n\tpath = ../evil.gitconfig\n")
			},
			ops: func(*stack) []op { return commitOps("inc.txt") },
			check: func(t *testing.T, _ *stack, r *commonv1.ExecutionResult) {
				cs := r.GetCommands()
				if e := cs[len(cs)-1].GetError() + cs[1].GetError(); !strings.Contains(e, "include") {
					t.Errorf("refusal does not name the include: %q", e)
				}
			}},
		{name: "git push with planted core.sshCommand and credential helper", absent: []string{"ssh-marker"}, failed: true,
			setup: func(t *testing.T, s *stack) {
				gitRepo(t, s)
				appendGitConfig(t, s, "[core]\n\tsshCommand = touch "+s.ws+"/ssh-marker; false\n[credential]\n\thelper = !touch "+s.ws+"/ssh-marker\n")
			},
			ops: func(*stack) []op {
				return []op{gitOp("push", "ssh://git@example.invalid/repo.git", map[string]string{"branch": "main"})}
			}},
		{name: "shell plants a hook", absent: []string{"hook2-marker", ".git/hooks/post-commit"},
			setup: gitRepo,
			ops: func(s *stack) []op {
				return append([]op{shell("printf '#!/bin/sh\\ntouch " + s.ws + "/hook2-marker\\n' > .git/hooks/post-commit && chmod +x .git/hooks/post-commit")},
					commitOps("after.txt")...)
			}},
		{name: "shell rewrites .git/config", setup: gitRepo,
			ops: func(*stack) []op {
				return []op{shell("git config core.fsmonitor 'touch fsm2-marker' && " + echoEscaped)}
			},
			failed: true, absent: []string{"fsm2-marker"}},
		{name: "file edit of .GIT/config", failed: true,
			ops:    func(*stack) []op { return []op{fileOp("create", ".GIT/config", "[core]\n\thooksPath = x\n")} },
			absent: []string{".GIT"}},
		{name: "file edit of .git./config", failed: true,
			ops:    func(*stack) []op { return []op{fileOp("create", ".git./config", "x\n")} },
			absent: []string{".git."}},
	}
}

// committed checks the git operations did their job, without the planted program.
func committed(file string) func(t *testing.T, s *stack, r *commonv1.ExecutionResult) {
	return func(t *testing.T, s *stack, r *commonv1.ExecutionResult) {
		if !r.GetSuccess() {
			t.Errorf("git operations failed: %v", r.GetCommands())
			return
		}
		cmd := exec.Command("git", "log", "-1", "--format=%s")
		cmd.Dir = s.ws
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_COUNT=2",
			"GIT_CONFIG_KEY_0=core.fsmonitor", "GIT_CONFIG_VALUE_0=false", "GIT_CONFIG_KEY_1=safe.directory", "GIT_CONFIG_VALUE_1=*")
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "add "+file {
			t.Errorf("last commit: %q %v", out, err)
		}
	}
}

// hostPortPath turns host:port into bash's /dev/tcp/host/port tail.
func hostPortPath(addr string) string {
	h, p, _ := net.SplitHostPort(addr)
	return h + "/" + p
}

// hostIP is a non-loopback address of this machine (loopback when there is none).
func hostIP() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return "127.0.0.1"
}

func abstractName(s *stack) string { return "picoclaw-sbx-" + filepath.Base(s.base) }

func listenAbstract(t *testing.T, s *stack) {
	t.Helper()
	ln, err := net.Listen("unix", "@"+abstractName(s))
	if err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			hits.Add(1)
			_ = c.Close()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		if hits.Load() != 0 {
			t.Errorf("the abstract socket was reached %d times", hits.Load())
		}
	})
}

func TestHostileApprovedCommandsStayInTheSandbox(t *testing.T) {
	cases := hostileCases()
	if len(cases) < 30 {
		t.Fatalf("only %d cases", len(cases))
	}
	for i, as := range users(t) {
		t.Run(as.name, func(t *testing.T) {
			s := startStack(t, as, fmt.Sprintf("2026010%d", i+1))
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) { runCase(t, s, tc) })
			}
			if n := s.httpHits.Load(); n != 0 {
				t.Errorf("the host's HTTP server was reached %d times", n)
			}
			for _, c := range canaries() {
				if strings.Contains(s.execLogs.String(), c) {
					t.Errorf("the executor's log contains the secret %q", c)
				}
			}
		})
	}
}

func runCase(t *testing.T, s *stack, tc hostile) {
	// Every case starts from an empty workspace owned by the executor's user.
	ents, _ := os.ReadDir(s.ws)
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(s.ws, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	if tc.setup != nil {
		tc.setup(t, s)
	}
	if out, err := exec.Command("chown", "-R", fmt.Sprintf("%d:%d", s.as.uid, s.as.gid), s.ws).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v %s", err, out)
	}
	hits := s.httpHits.Load()
	res, refused := s.submit(patchOf(t, tc.ops(s)...))
	if res == nil {
		t.Logf("approval refused the job: %s", refused)
	} else {
		r := res.GetResult()
		var all strings.Builder
		all.WriteString(res.GetResultText())
		for _, c := range r.GetCommands() {
			fmt.Fprintf(&all, "\n%s\n%s", c.GetOutput(), c.GetError())
			if (c.GetType() == "shell_command" || c.GetType() == "git_operation") && !c.GetSkipped() && c.GetSandbox() != "namespaces+landlock" {
				t.Errorf("command %d ran with sandbox %q", c.GetIndex(), c.GetSandbox())
			}
		}
		text := all.String()
		for _, c := range append(canaries(), connected, "reached-the-host-server") {
			if strings.Contains(text, c) {
				t.Errorf("output contains %q:\n%s", c, text)
			}
		}
		if tc.notIn != nil {
			for _, c := range tc.notIn(s) {
				if strings.Contains(text, c) {
					t.Errorf("output contains %q:\n%s", c, text)
				}
			}
		}
		cs := r.GetCommands()
		if tc.failed && len(cs) > 0 && cs[len(cs)-1].GetSuccess() && r.GetSuccess() {
			t.Errorf("the hostile operation succeeded:\n%s", text)
		}
		if tc.check != nil {
			tc.check(t, s, r)
		}
		if t.Failed() || testing.Verbose() {
			t.Logf("result:\n%s", text)
		}
	}
	if left := s.leftover(tc.marks...); len(left) > 0 {
		t.Errorf("processes outlived the job: %v", left)
	}
	for _, p := range tc.absent {
		if !filepath.IsAbs(p) {
			p = filepath.Join(s.ws, p)
		}
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s exists", p)
			_ = os.RemoveAll(p)
		}
	}
	if s.httpHits.Load() != hits {
		t.Errorf("the host's HTTP server was reached")
	}
	if err := syscall.Kill(s.execPid, 0); err != nil {
		t.Fatalf("the executor died: %v", err)
	}
	if res, err := http.Get("http://" + s.addrs["executor"] + "/healthz"); err != nil {
		t.Fatalf("executor health: %v", err)
	} else {
		res.Body.Close()
	}
}
