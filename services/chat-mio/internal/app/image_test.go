package app_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

// steps is the order in which the image was recorded and sent.
type steps struct {
	mu  sync.Mutex
	log []string
}

func (s *steps) add(x string) { s.mu.Lock(); s.log = append(s.log, x); s.mu.Unlock() }
func (s *steps) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

type fakeVision struct {
	cloud bool
	steps *steps
	mu    sync.Mutex
	reqs  []llm.Request
}

func (v *fakeVision) Chat(_ context.Context, req llm.Request) (*llm.Response, error) {
	v.mu.Lock()
	v.reqs = append(v.reqs, req)
	v.mu.Unlock()
	v.steps.add("model")
	return &llm.Response{Text: "猫が写っています", Provider: v.Provider(), Model: v.Model()}, nil
}
func (v *fakeVision) Provider() string {
	if v.cloud {
		return "openai"
	}
	return "ollama"
}
func (v *fakeVision) Model() string { return "vision-model" }
func (v *fakeVision) Cloud() bool   { return v.cloud }

type fakeImages struct {
	steps *steps
	err   error
	mu    sync.Mutex
	recs  []app.ImageRecord
}

func (f *fakeImages) RecordImage(_ context.Context, in app.ImageRecord) error {
	f.steps.add("record")
	if f.err != nil {
		return f.err
	}
	f.mu.Lock()
	f.recs = append(f.recs, in)
	f.mu.Unlock()
	return nil
}

// localOnlyStore is memStore with the session in local-only mode.
type localOnlyStore struct{ *memStore }

func (s localOnlyStore) LoadTurn(ctx context.Context, id, day string, n int, event string) (domain.Session, []byte, error) {
	sess, reply, err := s.memStore.LoadTurn(ctx, id, day, n, event)
	sess.LocalOnly = true
	return sess, reply, err
}

func newImageApp(t *testing.T, vision llm.Client, images app.ImageAudit, st app.SessionStore) *app.App {
	t.Helper()
	a, err := app.New(app.Config{ReplyBudget: 5 * time.Second, Vision: vision}, st, &seqIDs{},
		app.Peers{Router: &fakeRouter{res: codeRoute()}, Approvals: &fakeApprovals{}, Executor: &fakeExecutor{}, Heartbeat: fakeHeartbeat{}, Images: images},
		&fakeModel{reply: "hi"}, &fakeNotifier{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	return a
}

func sendImage(t *testing.T, a *app.App, caption, mime, locale string) string {
	t.Helper()
	res, err := a.HandleMessage(context.Background(), &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver,
		Text: caption, Locale: locale, Image: &chatv1.Image{Data: []byte("\xff\xd8\xff jpeg"), MimeType: mime, Source: "line:1"}})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range res.GetMessages() {
		texts = append(texts, m.GetText())
	}
	return strings.Join(texts, "\n")
}

func TestImageGoesToTheVisionModelAfterItsRecord(t *testing.T) {
	s := &steps{}
	vision, images := &fakeVision{steps: s}, &fakeImages{steps: s}
	a := newImageApp(t, vision, images, newMemStore())
	if got := sendImage(t, a, "これは何？", "image/jpeg", "ja"); got != "猫が写っています" {
		t.Fatalf("reply %q", got)
	}
	if got := s.all(); len(got) != 2 || got[0] != "record" || got[1] != "model" {
		t.Fatalf("steps %v: the record must come before the call", got)
	}
	rec := images.recs[0]
	if rec.JobID != "job_20260101_001" || rec.SessionID != session || string(rec.Data) != "\xff\xd8\xff jpeg" || rec.MIMEType != "image/jpeg" ||
		rec.Provider != "ollama" || rec.Model != "vision-model" {
		t.Errorf("record %+v", rec)
	}
	msgs := vision.reqs[0].Messages
	last := msgs[len(msgs)-1]
	if last.Role != llm.RoleUser || last.Content != "これは何？" || len(last.Images) != 1 || last.Images[0].MIMEType != "image/jpeg" {
		t.Errorf("model got %+v", last)
	}
	// Without a caption the model is asked to describe the picture.
	sendImage(t, a, "", "image/jpeg", "en")
	if q := vision.reqs[1].Messages[len(vision.reqs[1].Messages)-1].Content; q != domain.T(domain.EN, domain.MsgImagePrompt) {
		t.Errorf("question %q", q)
	}
}

func TestImageRefusals(t *testing.T) {
	cases := []struct {
		name      string
		vision    bool
		cloud     bool
		localOnly bool
		auditErr  error
		mime      string
		want      string
		recorded  bool
	}{
		{name: "no vision model", want: "models.vision", mime: "image/jpeg"},
		{name: "type", vision: true, mime: "image/svg+xml", want: "image/svg+xml"},
		{name: "cloud under local_only", vision: true, cloud: true, localOnly: true, mime: "image/png", want: "/cloud"},
		{name: "audit log down", vision: true, auditErr: errors.New("approval: unavailable"), mime: "image/png", want: "audit log", recorded: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &steps{}
			var vision llm.Client
			fv := &fakeVision{steps: s, cloud: c.cloud}
			if c.vision {
				vision = fv
			}
			var st app.SessionStore = newMemStore()
			if c.localOnly {
				st = localOnlyStore{newMemStore()}
			}
			a := newImageApp(t, vision, &fakeImages{steps: s, err: c.auditErr}, st)
			if got := sendImage(t, a, "", c.mime, "en"); !strings.Contains(got, c.want) {
				t.Errorf("reply %q, want it to mention %q", got, c.want)
			}
			got := s.all()
			if c.recorded != (len(got) == 1 && got[0] == "record") || (!c.recorded && len(got) != 0) {
				t.Errorf("steps %v", got)
			}
			if len(fv.reqs) != 0 {
				t.Error("the image was sent to the model")
			}
		})
	}
	// A cloud vision model is used when the session is not local-only.
	s := &steps{}
	a := newImageApp(t, &fakeVision{steps: s, cloud: true}, &fakeImages{steps: s}, newMemStore())
	if got := sendImage(t, a, "", "image/webp", "ja"); got != "猫が写っています" || len(s.all()) != 2 {
		t.Errorf("cloud vision: %q, steps %v", got, s.all())
	}
}

// A caption that reads like a command is a question about the picture: the image turn keeps
// its own JobID and decides nothing.
func TestImageCaptionIsNotACommand(t *testing.T) {
	s := &steps{}
	images := &fakeImages{steps: s}
	a := newImageApp(t, &fakeVision{steps: s}, images, newMemStore())
	if got := sendImage(t, a, "/approve job_20260101_009", "image/png", "ja"); got != "猫が写っています" {
		t.Fatalf("reply %q", got)
	}
	if len(images.recs) != 1 || images.recs[0].JobID != "job_20260101_001" {
		t.Fatalf("records %+v", images.recs)
	}
}

type downVision struct{ fakeVision }

func (v *downVision) Chat(context.Context, llm.Request) (*llm.Response, error) {
	return nil, fmt.Errorf("%w: connection refused", llm.ErrUnavailable)
}

// A vision model that does not answer is reported, not retried: a retry would send and record
// the picture again.
func TestVisionModelDownIsReported(t *testing.T) {
	s := &steps{}
	a := newImageApp(t, &downVision{fakeVision{steps: s}}, &fakeImages{steps: s}, newMemStore())
	if got := sendImage(t, a, "", "image/png", "en"); !strings.Contains(got, "vision model (ollama/vision-model) did not answer") {
		t.Fatalf("reply %q", got)
	}
}
