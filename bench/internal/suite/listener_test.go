package suite

import (
	"errors"
	"net"
	"os"
	"testing"
)

func TestListeners(t *testing.T) {
	table := []byte(`  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:18EB 00000000:0000 0A 00000000:00000000 00:00000000 00000000   104        0 20391 1 0000000000000000 100 0 0 10 0
   1: 00000000:1538 00000000:0000 0A 00000000:00000000 00:00000000 00000000   106        0 20412 1 0000000000000000 100 0 0 10 0
   2: 0100007F:18EB 0100007F:C350 01 00000000:00000000 00:00000000 00000000   104        0 88812 1 0000000000000000 20 4 30 10 -1
`)
	got := listeners(table)
	if len(got) != 2 {
		t.Fatalf("%d listeners, want 2 (the established connection is not one): %+v", len(got), got)
	}
	if !got[0].ip.Equal(net.IPv4(127, 0, 0, 1)) || got[0].port != 6379 || got[0].inode != "20391" {
		t.Fatalf("first listener %+v, want 127.0.0.1:6379 inode 20391", got[0])
	}
	if !got[1].ip.IsUnspecified() || got[1].port != 5432 {
		t.Fatalf("second listener %+v, want 0.0.0.0:5432", got[1])
	}
	v6 := listeners([]byte("   0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 777 1\n"))
	if len(v6) != 1 || !v6[0].ip.Equal(net.IPv6loopback) || v6[0].port != 8080 {
		t.Fatalf("tcp6 listener %+v, want [::1]:8080", v6)
	}
}

// TestListenerPIDFindsThisProcess: a listener this test opens is found as this process's.
func TestListenerPIDFindsThisProcess(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	pid, err := ListenerPID(ln.Addr().String())
	if err != nil || pid != os.Getpid() {
		t.Fatalf("ListenerPID(%s) = %d, %v; want %d", ln.Addr(), pid, err, os.Getpid())
	}
	addr := ln.Addr().String()
	ln.Close()
	if _, err := ListenerPID(addr); !errors.Is(err, ErrNoListener) {
		t.Fatalf("after close: %v, want ErrNoListener", err)
	}
}
