package suite

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// TestLineAPIHandsRepliesToTheirWaiter: a reply to an awaited token reaches its waiter with the
// time it arrived; a reply to a token nobody issued is refused, as LINE does; pushes are counted.
func TestLineAPIHandsRepliesToTheirWaiter(t *testing.T) {
	l := NewLineAPI()
	defer l.Close()
	call := func(path, body string) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, l.URL+path, bytes.NewBufferString(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+LineToken)
		req.Header.Set("Content-Type", "application/json")
		res, err := l.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	wait := l.Await("tok-1")
	before := time.Now()
	if code := call("/v2/bot/message/reply", `{"replyToken":"tok-1","messages":[{"type":"text","text":"hi"}]}`); code != http.StatusOK {
		t.Fatalf("reply: %d", code)
	}
	select {
	case r := <-wait:
		if r.Text != "hi" || r.At.Before(before) {
			t.Fatalf("reply %+v", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiter not served")
	}
	if code := call("/v2/bot/message/reply", `{"replyToken":"never-issued","messages":[{"type":"text","text":"x"}]}`); code != http.StatusBadRequest {
		t.Fatalf("unknown token: %d", code)
	}
	if code := call("/v2/bot/message/push", `{"to":"U1","messages":[{"type":"text","text":"x"}]}`); code != http.StatusOK {
		t.Fatalf("push: %d", code)
	}
	if l.Replies.Load() != 1 || l.Pushes.Load() != 1 || l.Unawaited.Load() != 0 {
		t.Fatalf("counts: replies %d pushes %d unawaited %d", l.Replies.Load(), l.Pushes.Load(), l.Unawaited.Load())
	}
}

// TestLineAPITrustedThroughCAEnv: a Go process given CAEnv reaches the fake over HTTPS and
// HTTP/2 with its default transport, as the suite's LINE client does; without it, the
// certificate is refused.
func TestLineAPITrustedThroughCAEnv(t *testing.T) {
	l := NewLineAPI()
	defer l.Close()
	env, err := l.CAEnv(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	file, ok := strings.CutPrefix(env[0], "SSL_CERT_FILE=")
	if !ok || !strings.HasPrefix(l.URL, "https://") {
		t.Fatalf("env %v for %s", env, l.URL)
	}
	pemBytes, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pemBytes) {
		t.Fatal("no certificate in the file")
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: roots}
	res, err := (&http.Client{Transport: tr}).Get(l.URL + "/v2/bot/message/1/content")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.ProtoMajor != 2 || res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("%s %d, want HTTP/2 and 401 without a token", res.Proto, res.StatusCode)
	}
	if _, err := http.Get(l.URL); err == nil {
		t.Fatal("the fake's certificate was trusted without its authority")
	}
}
