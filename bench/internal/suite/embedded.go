package suite

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/launch"
)

// StrippedBuildFlags build the embedded binary as it is shipped (make build, make run): SQLite
// only, no symbol table, no DWARF, no local paths.
var StrippedBuildFlags = append([]string{"-tags=sqliteonly"}, launch.ShippedBuildFlags...)

// ShippedBuildEnv is the environment of every release build (make build, the images): pure Go,
// linked by Go's own linker, which lays the binary out as shipped (its resident pages differ from a
// cgo build's).
var ShippedBuildEnv = launch.ShippedBuildEnv

// BuildEmbedded compiles the picoclaw command of the repository at root, stripped, into dir
// and returns the binary's path.
func BuildEmbedded(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "picoclaw")
	args := append(append([]string{"build"}, StrippedBuildFlags...), "-o", bin, "./cmd/picoclaw")
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), ShippedBuildEnv...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, out)
	}
	return bin, nil
}

// EmbeddedOptions configure `picoclaw run --chat off` against the fakes.
type EmbeddedOptions struct {
	// Bin is the picoclaw binary; Root the working directory (the repository root: the suite
	// reads its persona and rules files from there).
	Bin, Root string
	// DataDir is --data.
	DataDir string
	// LineAPI and Ollama are the fakes' base URLs; LineUsers the LINE allowlist.
	LineAPI, Ollama string
	LineUsers       []string
	// Env is appended last (overrides).
	Env []string
	// Timeout bounds the wait for the banner (default 60 s).
	Timeout time.Duration
}

// env is the process environment: this one's without any PICOCLAW_, LINE_ or SLACK_ setting
// (the run is defined by the options alone), plus the fakes and the LINE channel.
func (o EmbeddedOptions) env() []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "PICOCLAW_") || strings.HasPrefix(kv, "LINE_") || strings.HasPrefix(kv, "SLACK_")
	})
	env = append(env,
		"LINE_CHANNEL_SECRET="+LineSecret,
		"LINE_CHANNEL_ACCESS_TOKEN="+LineToken,
		"PICOCLAW_LINE_API_BASE_URL="+o.LineAPI,
		"PICOCLAW_LINE_ALLOWED_USERS="+strings.Join(o.LineUsers, ","),
		"PICOCLAW_OLLAMA_BASE_URL="+o.Ollama,
		"OTEL_EXPORTER_OTLP_ENDPOINT=", "OTEL_TRACES_EXPORTER=none",
	)
	return append(env, o.Env...)
}

// Embedded is one running `picoclaw run --chat off`.
type Embedded struct {
	// Ready is the time from process start to the banner line with the LINE webhook URL, which
	// the suite prints once every service answers /healthz.
	Ready time.Duration
	// WebhookURL is the LINE webhook the banner names.
	WebhookURL string
	start      time.Time
	cmd        *exec.Cmd
	out        *bannerWatch
	done       chan struct{}
	err        error
}

var webhookLineRE = regexp.MustCompile(`LINE webhook: (http://\S+)`)

// WebhookFromBanner is the LINE webhook URL a banner line names ("" if none).
func WebhookFromBanner(line string) string {
	if m := webhookLineRE.FindStringSubmatch(line); m != nil {
		return m[1]
	}
	return ""
}

// bannerWatch keeps the process's output and notes when the banner's webhook line arrives.
type bannerWatch struct {
	mu      sync.Mutex
	all     bytes.Buffer
	partial []byte
	start   time.Time
	ready   chan struct{}
	at      time.Duration
	url     string
}

func (w *bannerWatch) Write(p []byte) (int, error) {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.all.Write(p)
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		line := string(w.partial[:i])
		w.partial = w.partial[i+1:]
		if u := WebhookFromBanner(line); u != "" && w.url == "" {
			w.url, w.at = u, now.Sub(w.start)
			close(w.ready)
		}
	}
	return len(p), nil
}

func (w *bannerWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.all.String()
}

// StartEmbedded starts `picoclaw run --chat off --data DIR` and waits for its banner.
func StartEmbedded(ctx context.Context, o EmbeddedOptions) (*Embedded, error) {
	if o.Timeout <= 0 {
		o.Timeout = 60 * time.Second
	}
	cmd := exec.Command(o.Bin, "run", "--chat", "off", "--data", o.DataDir)
	cmd.Dir = o.Root
	cmd.Env = o.env()
	e := &Embedded{cmd: cmd, done: make(chan struct{})}
	e.out = &bannerWatch{ready: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = e.out, e.out
	e.start = time.Now()
	e.out.start = e.start
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		e.err = cmd.Wait()
		close(e.done)
	}()
	timeout := time.NewTimer(o.Timeout)
	defer timeout.Stop()
	select {
	case <-e.out.ready:
		e.out.mu.Lock()
		e.Ready, e.WebhookURL = e.out.at, e.out.url
		e.out.mu.Unlock()
		return e, nil
	case <-e.done:
		return nil, fmt.Errorf("picoclaw run exited before its banner: %v\n%s", e.err, e.out.String())
	case <-ctx.Done():
		_, _ = e.Terminate(5 * time.Second)
		return nil, ctx.Err()
	case <-timeout.C:
		_, _ = e.Terminate(5 * time.Second)
		return nil, fmt.Errorf("no banner from picoclaw run within %v:\n%s", o.Timeout, e.out.String())
	}
}

// Pid is the process id.
func (e *Embedded) Pid() int { return e.cmd.Process.Pid }

// Done is closed when the process has exited.
func (e *Embedded) Done() <-chan struct{} { return e.done }

// Output is what the process printed so far.
func (e *Embedded) Output() string { return e.out.String() }

// Terminate sends SIGTERM and returns the time until the process has exited; after limit it
// kills the process and says so.
func (e *Embedded) Terminate(limit time.Duration) (time.Duration, error) {
	select {
	case <-e.done:
		return 0, fmt.Errorf("picoclaw run had already exited: %v", e.err)
	default:
	}
	t0 := time.Now()
	if err := e.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return 0, err
	}
	select {
	case <-e.done:
		d := time.Since(t0)
		if e.err != nil {
			return d, fmt.Errorf("picoclaw run after SIGTERM: %w\n%s", e.err, e.out.String())
		}
		return d, nil
	case <-time.After(limit):
		_ = e.cmd.Process.Kill()
		<-e.done
		return time.Since(t0), fmt.Errorf("picoclaw run still running %v after SIGTERM: killed", limit)
	}
}

// AwaitWebhook sends LINE's webhook verification (a signed request without events) until the
// webhook answers 200 and returns the time from process start to that answer.
func (e *Embedded) AwaitWebhook(client *http.Client, limit time.Duration) (time.Duration, error) {
	body := fakeline.Body()
	deadline := time.Now().Add(limit)
	for {
		code, err := Webhook{URL: e.WebhookURL, Client: client}.Post(body, Sign(body))
		if err == nil && code == http.StatusOK {
			return time.Since(e.start), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("webhook %s: status %d, %v", e.WebhookURL, code, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// InternalURL is the base URL of one service's internal listener, read from the server.started
// records of suite.log in dataDir (the embedded suite picks its ports at start and prints only
// the public ones). Every listener of the process serves /debug/pprof when debug.pprof is on.
func InternalURL(dataDir, service string) (string, error) {
	f, err := os.Open(filepath.Join(dataDir, "suite.log"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	addrs, err := startedAddrs(f)
	if err != nil {
		return "", err
	}
	a, ok := addrs[service]
	if !ok {
		return "", fmt.Errorf("%s: no server.started record in %s", service, f.Name())
	}
	return "http://" + a, nil
}

// startedAddrs maps each service to the internal address of its last server.started record.
func startedAddrs(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, []byte(`"server.started"`)) {
			continue
		}
		var rec struct {
			Msg     string `json:"msg"`
			Service string `json:"service"`
			Addr    string `json:"addr"`
		}
		if json.Unmarshal(line, &rec) != nil || rec.Msg != "server.started" || rec.Addr == "" {
			continue
		}
		out[rec.Service] = rec.Addr
	}
	return out, sc.Err()
}

// Compact runs `picoclaw data compact --data dir` (the suite must be stopped) and returns its
// output.
func Compact(ctx context.Context, bin, root, dataDir string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, "data", "compact", "--data", dataDir)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("picoclaw data compact: %w\n%s", err, out)
	}
	return string(out), nil
}

// File is one file of a data directory.
type File struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
}

// DataFiles lists the files under dir (paths relative to it, sorted).
func DataFiles(dir string) ([]File, error) {
	var out []File
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			// A write-ahead log may vanish between the listing and the stat.
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		out = append(out, File{Path: filepath.ToSlash(rel), Bytes: fi.Size()})
		return nil
	})
	return out, err
}
