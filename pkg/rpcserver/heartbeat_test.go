package rpcserver

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"

	"connectrpc.com/connect"

	heartbeatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/heartbeat/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/heartbeat/v1/heartbeatv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
)

// slowHeartbeat is a handler whose Report blocks until released, so a test can look at the
// service's state while the request is in flight.
type slowHeartbeat struct {
	heartbeatv1connect.UnimplementedHeartbeatServiceHandler
	entered chan struct{}
	release chan struct{}
	fail    bool
}

func (h *slowHeartbeat) Report(ctx context.Context, _ *heartbeatv1.ReportRequest) (*heartbeatv1.ReportResponse, error) {
	h.entered <- struct{}{}
	<-h.release
	if h.fail {
		return nil, connect.NewError(connect.CodeInternal, errors.New("store down"))
	}
	return &heartbeatv1.ReportResponse{}, nil
}

func (h *slowHeartbeat) Beat(context.Context, *heartbeatv1.BeatRequest) (*heartbeatv1.BeatResponse, error) {
	return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("bad beat"))
}

func TestServerTracksRequestsInFlight(t *testing.T) {
	tel, err := telemetry.New(context.Background(), telemetry.Config{ServiceName: "approval", LogWriter: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Name: "approval", Listener: ln, Credentials: testinfra.Credentials(t, svcauth.Heartbeat), Heartbeat: &Heartbeat{Enabled: false, Interval: time.Second}}, tel)
	if err != nil {
		t.Fatal(err)
	}
	h := &slowHeartbeat{entered: make(chan struct{}), release: make(chan struct{})}
	srv.Mount(heartbeatv1connect.NewHeartbeatServiceHandler(h, srv.HandlerOptions()...))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = srv.Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	<-srv.Ready()
	opts, err := ClientOptions(tel, 5*time.Second, svcauth.Client(testinfra.Credentials(t, svcauth.ChatMio), svcauth.Heartbeat))
	if err != nil {
		t.Fatal(err)
	}
	client := heartbeatv1connect.NewHeartbeatServiceClient(NewHTTPClient(), "http://"+ln.Addr().String(), opts...)

	call := func(jobID string) chan error {
		done := make(chan error, 1)
		go func() {
			_, err := client.Report(jobid.WithJobID(context.Background(), jobID), &heartbeatv1.ReportRequest{})
			done <- err
		}()
		<-h.entered
		return done
	}

	done := call("job_20260101_042")
	snap := srv.Heartbeat().Service().Snapshot(time.Minute)
	if snap.Status != "busy" || len(snap.JobIDs) != 1 || snap.JobIDs[0] != "job_20260101_042" {
		t.Fatalf("in flight: %+v, want busy with job_20260101_042", snap)
	}
	h.release <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if snap := srv.Heartbeat().Service().Snapshot(time.Minute); snap.Status != "idle" {
		t.Fatalf("after success: %+v, want idle", snap)
	}

	// A client mistake is not the service's fault.
	if _, err := client.Beat(context.Background(), &heartbeatv1.BeatRequest{}); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Fatalf("Beat = %v", err)
	}
	if snap := srv.Heartbeat().Service().Snapshot(time.Minute); snap.Status != "idle" {
		t.Fatalf("after invalid argument: %+v, want idle", snap)
	}

	h.fail = true
	done = call("job_20260101_043")
	h.release <- struct{}{}
	<-done
	if snap := srv.Heartbeat().Service().Snapshot(time.Minute); snap.Status != "error" || snap.LastError == "" {
		t.Fatalf("after internal error: %+v, want error", snap)
	}

	srv.IgnoreInHeartbeat(heartbeatv1connect.HeartbeatServiceReportProcedure)
	h.fail = false
	done = call("job_20260101_044")
	if snap := srv.Heartbeat().Service().Snapshot(time.Minute); snap.Status == "busy" {
		t.Fatalf("ignored procedure made the service busy: %+v", snap)
	}
	h.release <- struct{}{}
	<-done
}
