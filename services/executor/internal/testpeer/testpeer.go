// Package testpeer is a small approval service for the executor's tests: it speaks the real
// approval Connect protocol (generated handler) and keeps approval's rules that the executor
// depends on — single-use claims, status checks, and an event log of every report.
package testpeer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"

	"connectrpc.com/connect"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
)

// Job is a job as the peer stores it.
type Job struct {
	ID           string
	Status       approvalv1.JobStatus
	Patch        string
	Hash         string
	AutoApproved bool
	UsesBrowser  bool
}

// Event is one audit entry.
type Event struct {
	JobID  string
	Type   string
	Detail string
	Result bool // whether a result was attached
	Report *approvalv1.ReportExecutionRequest
}

// Peer is the in-test approval service.
type Peer struct {
	approvalv1connect.UnimplementedApprovalServiceHandler

	mu     sync.Mutex
	jobs   map[string]*Job
	events []Event
	claims int
	server *httptest.Server
}

// Start serves the peer on a local h2c-capable test server until Close.
func Start() *Peer {
	p := &Peer{jobs: map[string]*Job{}}
	mux := http.NewServeMux()
	mux.Handle(approvalv1connect.NewApprovalServiceHandler(p))
	srv := httptest.NewUnstartedServer(mux)
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	srv.Config.Protocols = &protocols
	srv.Start()
	p.server = srv
	return p
}

// URL is the peer's base URL.
func (p *Peer) URL() string { return p.server.URL }

// Close stops the server.
func (p *Peer) Close() { p.server.Close() }

// Add stores a job.
func (p *Peer) Add(j Job) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := j
	p.jobs[j.ID] = &c
}

// Job returns a copy of the stored job.
func (p *Peer) Job(id string) Job {
	p.mu.Lock()
	defer p.mu.Unlock()
	if j, ok := p.jobs[id]; ok {
		return *j
	}
	return Job{}
}

// Events returns the audit entries of a job.
func (p *Peer) Events(id string) []Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Event
	for _, e := range p.events {
		if e.JobID == id {
			out = append(out, e)
		}
	}
	return out
}

// SuccessfulClaims counts claims that handed content out.
func (p *Peer) SuccessfulClaims() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.claims
}

func (p *Peer) record(e Event) { p.events = append(p.events, e) }

func (p *Peer) pb(j *Job) *approvalv1.Job {
	return &approvalv1.Job{JobId: j.ID, Status: j.Status, Patch: j.Patch, ContentHash: j.Hash, UsesBrowser: j.UsesBrowser}
}

// GetJob returns a job.
func (p *Peer) GetJob(_ context.Context, req *approvalv1.GetJobRequest) (*approvalv1.GetJobResponse, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	j, ok := p.jobs[req.GetJobId()]
	if !ok {
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("job %s not found", req.GetJobId()))
	}
	return &approvalv1.GetJobResponse{Job: p.pb(j)}, nil
}

// ClaimJob moves granted/auto_approved → executing once (compare-and-set under the lock).
func (p *Peer) ClaimJob(_ context.Context, req *approvalv1.ClaimJobRequest) (*approvalv1.ClaimJobResponse, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	j, ok := p.jobs[req.GetJobId()]
	if !ok {
		p.record(Event{JobID: req.GetJobId(), Type: "claim_rejected", Detail: "not found"})
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("job %s not found", req.GetJobId()))
	}
	switch j.Status {
	case approvalv1.JobStatus_JOB_STATUS_GRANTED, approvalv1.JobStatus_JOB_STATUS_AUTO_APPROVED:
	default:
		reason := fmt.Sprintf("job %s is %s", j.ID, j.Status)
		switch j.Status {
		case approvalv1.JobStatus_JOB_STATUS_EXPIRED:
			reason = fmt.Sprintf("job %s expired", j.ID)
		case approvalv1.JobStatus_JOB_STATUS_EXECUTING, approvalv1.JobStatus_JOB_STATUS_COMPLETED, approvalv1.JobStatus_JOB_STATUS_FAILED:
			reason = fmt.Sprintf("job %s was already claimed", j.ID)
		}
		p.record(Event{JobID: j.ID, Type: "claim_rejected", Detail: reason})
		return nil, connect.NewError(connect.CodeFailedPrecondition, errors.New(reason))
	}
	auto := j.Status == approvalv1.JobStatus_JOB_STATUS_AUTO_APPROVED || j.AutoApproved
	j.Status = approvalv1.JobStatus_JOB_STATUS_EXECUTING
	p.claims++
	p.record(Event{JobID: j.ID, Type: "claimed", Detail: req.GetExecutorId()})
	return &approvalv1.ClaimJobResponse{Job: p.pb(j), Patch: j.Patch, ContentHash: j.Hash, AutoApproved: auto}, nil
}

// ReportExecution records an execution event and moves the job on.
func (p *Peer) ReportExecution(_ context.Context, req *approvalv1.ReportExecutionRequest) (*approvalv1.ReportExecutionResponse, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := Event{JobID: req.GetJobId(), Detail: req.GetDetail(), Result: req.GetResult() != nil, Report: req}
	j, ok := p.jobs[req.GetJobId()]
	switch req.GetEvent() {
	case approvalv1.ExecutionEvent_EXECUTION_EVENT_REFUSED:
		e.Type = "execution_refused"
		p.record(e)
		if ok && j.Status == approvalv1.JobStatus_JOB_STATUS_EXECUTING {
			j.Status = approvalv1.JobStatus_JOB_STATUS_FAILED
		}
		var job *approvalv1.Job
		if ok {
			job = p.pb(j)
		}
		return &approvalv1.ReportExecutionResponse{Job: job}, nil
	case approvalv1.ExecutionEvent_EXECUTION_EVENT_STARTED:
		e.Type = "execution_started"
	case approvalv1.ExecutionEvent_EXECUTION_EVENT_COMPLETED:
		e.Type = "execution_completed"
	case approvalv1.ExecutionEvent_EXECUTION_EVENT_FAILED:
		e.Type = "execution_failed"
	case approvalv1.ExecutionEvent_EXECUTION_EVENT_HASH_MISMATCH:
		e.Type = "hash_mismatch"
	default:
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("event is required"))
	}
	if !ok {
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("job %s not found", req.GetJobId()))
	}
	if j.Status != approvalv1.JobStatus_JOB_STATUS_EXECUTING {
		return nil, connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("job %s is %s, not executing", j.ID, j.Status))
	}
	p.record(e)
	switch req.GetEvent() {
	case approvalv1.ExecutionEvent_EXECUTION_EVENT_COMPLETED:
		j.Status = approvalv1.JobStatus_JOB_STATUS_COMPLETED
	case approvalv1.ExecutionEvent_EXECUTION_EVENT_FAILED, approvalv1.ExecutionEvent_EXECUTION_EVENT_HASH_MISMATCH:
		j.Status = approvalv1.JobStatus_JOB_STATUS_FAILED
	}
	return &approvalv1.ReportExecutionResponse{Job: p.pb(j)}, nil
}
