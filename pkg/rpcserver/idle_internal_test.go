package rpcserver

import (
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
)

// The suite's clients let an idle connection go before a listener with the default idle
// timeout would close it (a request sent on a connection the server is closing fails).
func TestClientIdleTimeoutBelowTheListeners(t *testing.T) {
	if server := config.DefaultHTTP().IdleTimeout; clientIdleTimeout >= server {
		t.Fatalf("client idle timeout %s, listeners' %s", clientIdleTimeout, server)
	}
	tr, ok := NewHTTPClient().client.Transport.(*inProcessTransport)
	if !ok {
		t.Fatalf("transport %T", NewHTTPClient().client.Transport)
	}
	if tr.next.IdleConnTimeout != clientIdleTimeout {
		t.Fatalf("idle timeout %s", tr.next.IdleConnTimeout)
	}
}
