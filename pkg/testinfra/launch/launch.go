// Package launch builds the suite's service binaries and runs them as processes, the way the
// end-to-end tests and the load tool use them: free ports for every listener, the
// environment that points the services at each other, one process per service holding only
// its own key, started once it answers, stopped with SIGTERM.
package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// Services are the suite's services, in the order they are started (dependencies first).
var Services = []string{
	"heartbeat", "approval", "executor", "coder-order", "router-shiro", "chat-mio", "gateway-line", "gateway-slack",
}

// PublicServices have a public listener (webhooks, REST, console) besides the internal one.
var PublicServices = []string{"gateway-line", "gateway-slack", "approval"}

// EnvKey is a service name as it appears in environment variables (chat-mio → CHAT_MIO).
func EnvKey(service string) string {
	return strings.ToUpper(strings.ReplaceAll(service, "-", "_"))
}

// Root finds the repository root (the directory holding go.work) from dir upwards.
func Root(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("go.work not found above " + dir)
		}
	}
}

// ShippedBuildFlags and ShippedBuildEnv build a binary as make build and the images do (without
// the version stamp and the build tag): stripped, without local paths, pure Go.
// ShippedServiceFlags add the services' tag (no SQLite); the embedded picoclaw has its own
// (config.SQLiteOnlyTag).
var (
	ShippedBuildFlags   = []string{"-trimpath", "-ldflags=-s -w"}
	ShippedServiceFlags = append([]string{"-tags=" + config.ServerOnlyTag}, ShippedBuildFlags...)
	ShippedBuildEnv     = []string{"CGO_ENABLED=0"}
)

// Build compiles every service of the repository at root into dir with the given extra
// go build flags (e.g. ShippedServiceFlags), pure Go as shipped.
func Build(ctx context.Context, root, dir string, flags ...string) error {
	args := append([]string{"build"}, flags...)
	args = append(args, "-o", dir+string(filepath.Separator))
	for _, s := range Services {
		args = append(args, "./services/"+s+"/cmd/"+s)
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), ShippedBuildEnv...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %w\n%s", err, out)
	}
	return nil
}

// Layout is where every service listens.
type Layout struct {
	// Addrs are the internal listeners; Public the public ones of PublicServices.
	Addrs, Public map[string]string
}

// NewLayout picks free loopback ports for every listener.
func NewLayout() (Layout, error) {
	free, err := testinfra.FreeAddrs(len(Services) + len(PublicServices))
	if err != nil {
		return Layout{}, err
	}
	l := Layout{Addrs: map[string]string{}, Public: map[string]string{}}
	for i, s := range Services {
		l.Addrs[s] = free[i]
	}
	for i, s := range PublicServices {
		l.Public[s] = free[len(Services)+i]
	}
	return l, nil
}

// Env is the environment that makes every service listen where the layout says and find
// the others there.
func (l Layout) Env() []string {
	var env []string
	for _, s := range Services {
		env = append(env,
			fmt.Sprintf("PICOCLAW_SERVICES_%s_LISTEN=%s", EnvKey(s), l.Addrs[s]),
			fmt.Sprintf("PICOCLAW_SERVICES_%s_URL=http://%s", EnvKey(s), l.Addrs[s]))
	}
	for _, s := range PublicServices {
		env = append(env,
			fmt.Sprintf("PICOCLAW_SERVICES_%s_PUBLIC_LISTEN=%s", EnvKey(s), l.Public[s]),
			fmt.Sprintf("PICOCLAW_SERVICES_%s_PUBLIC_URL=http://%s", EnvKey(s), l.Public[s]))
	}
	return env
}

// Spec is one process to start.
type Spec struct {
	// Name is the service; its binary is BinDir/Name and it gets only its own key.
	Name, BinDir string
	// Dir is the working directory.
	Dir string
	Env []string
	// Addr is the internal listener polled for ReadyPath (default /readyz).
	Addr, ReadyPath string
	// Output receives stdout and stderr.
	Output io.Writer
	// Timeout bounds the wait for readiness (default 20 s).
	Timeout time.Duration
}

// Proc is one running service.
type Proc struct {
	Name, Addr string
	// Ready is the time from process start to the first ready answer.
	Ready time.Duration
	cmd   *exec.Cmd
	done  chan struct{}
	err   error
}

// Start starts the process and waits until it answers on ReadyPath; a process that exits
// first fails at once with its exit status.
func Start(ctx context.Context, sp Spec) (*Proc, error) {
	if sp.ReadyPath == "" {
		sp.ReadyPath = "/readyz"
	}
	if sp.Timeout <= 0 {
		sp.Timeout = 20 * time.Second
	}
	cmd := exec.Command(filepath.Join(sp.BinDir, sp.Name))
	cmd.Dir = sp.Dir
	cmd.Env = append(slices.Clip(sp.Env), testinfra.AuthEnv(sp.Name)...)
	cmd.Stdout, cmd.Stderr = sp.Output, sp.Output
	p := &Proc{Name: sp.Name, Addr: sp.Addr, cmd: cmd, done: make(chan struct{})}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	client := &http.Client{Timeout: time.Second}
	deadline := time.NewTimer(sp.Timeout)
	defer deadline.Stop()
	for {
		res, err := client.Get("http://" + sp.Addr + sp.ReadyPath)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				p.Ready = time.Since(start)
				return p, nil
			}
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("%s exited before it was ready: %v", sp.Name, p.err)
		case <-ctx.Done():
			_ = p.Stop(5 * time.Second)
			return nil, ctx.Err()
		case <-deadline.C:
			_ = p.Stop(5 * time.Second)
			return nil, fmt.Errorf("%s not ready after %v", sp.Name, sp.Timeout)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Pid is the process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// URL is the internal listener's base URL.
func (p *Proc) URL() string { return "http://" + p.Addr }

// Done is closed when the process has ended.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Signal sends sig to the process.
func (p *Proc) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Stop sends SIGTERM and waits up to grace for the process to end, then kills it. It
// returns the exit error after SIGTERM, or an error saying it had to be killed.
func (p *Proc) Stop(grace time.Duration) error {
	select {
	case <-p.done:
		return p.err
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return p.err
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s still running %v after SIGTERM: killed", p.Name, grace)
	}
}
