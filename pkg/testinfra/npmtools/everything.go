package npmtools

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// everythingStart bounds the wait for the server to listen.
const everythingStart = 30 * time.Second

// RunServerEverything runs the MCP reference server (ServerEverything, at its pinned version) over
// Streamable HTTP on a free port until the test ends and returns its MCP endpoint. The process
// sees PATH and nothing else of the test's environment (the server has a tool that prints it).
func RunServerEverything(t testinfra.TB) string {
	t.Helper()
	pkg := Require(t, ServerEverything)
	node := Node(t)
	for attempt := 0; ; attempt++ {
		addr := testinfra.FreeAddr(t)
		port := addr[strings.LastIndexByte(addr, ':')+1:]
		url, ok := startEverything(t, node, pkg, port)
		if ok {
			return url
		}
		if attempt == 2 {
			t.Fatalf("npmtools: %s@%s did not start listening (three ports tried)", pkg.Name, pkg.Version)
			return ""
		}
	}
}

// startEverything starts the server on port; ok is false when it exited before listening (the
// port was taken meanwhile).
func startEverything(t testinfra.TB, node string, pkg Package, port string) (string, bool) {
	t.Helper()
	cmd := exec.Command(node, filepath.Join(pkg.Dir, "dist", "index.js"), "streamableHttp")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "PORT=" + port}
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatalf("npmtools: %v", err)
		return "", false
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("npmtools: starting %s: %v", pkg.Name, err)
		return "", false
	}
	// The server says on stderr when it listens; what it writes afterwards is kept for a
	// failing test's log.
	listening := make(chan bool, 1)
	var mu sync.Mutex
	var output strings.Builder
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		said := false
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			output.WriteString(line + "\n")
			mu.Unlock()
			if !said && strings.Contains(line, "listening on port "+port) {
				said = true
				listening <- true
			}
		}
		if !said {
			listening <- false
		}
	}()
	stop := func() {
		_ = cmd.Process.Kill()
		<-done
		_ = cmd.Wait()
	}
	select {
	case ok := <-listening:
		if !ok {
			stop()
			mu.Lock()
			t.Logf("npmtools: %s on port %s exited: %s", pkg.Name, port, output.String())
			mu.Unlock()
			return "", false
		}
	case <-time.After(everythingStart):
		stop()
		t.Fatalf("npmtools: %s did not listen on port %s within %s", pkg.Name, port, everythingStart)
		return "", false
	}
	t.Cleanup(func() {
		stop()
		if f, ok := t.(interface{ Failed() bool }); ok && f.Failed() {
			mu.Lock()
			defer mu.Unlock()
			t.Logf("%s@%s output:\n%s", pkg.Name, pkg.Version, output.String())
		}
	})
	return "http://127.0.0.1:" + port + "/mcp", true
}
