package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

// seeImage answers an image (its caption, if any, is the question) with the vision model. The
// image leaves chat-mio only after its audit record is written; a cloud vision model is used
// only while the session is not local_only.
func (a *App) seeImage(ctx context.Context, t *turn) {
	img := t.req.GetImage()
	log := a.log.With(slog.String("source", img.GetSource()), slog.String("mime_type", img.GetMimeType()), slog.Int("size", len(img.GetData())))
	vision := a.cfg.Vision
	switch {
	case vision == nil:
		log.InfoContext(ctx, "chat.image_refused", slog.String("reason", "no_vision_model"))
		t.say(domain.T(t.loc, domain.MsgVisionNotConfigured))
		return
	case !config.ImageTypeAllowed(img.GetMimeType()) || len(img.GetData()) == 0:
		log.InfoContext(ctx, "chat.image_refused", slog.String("reason", "type"))
		t.say(domain.T(t.loc, domain.MsgImageBadType, img.GetMimeType()))
		return
	case vision.Cloud() && t.sess.LocalOnly:
		log.InfoContext(ctx, "chat.image_refused", slog.String("reason", "local_only"))
		t.say(domain.T(t.loc, domain.MsgVisionLocalOnly, vision.Provider()+"/"+vision.Model()))
		return
	case a.peers.Images == nil:
		log.ErrorContext(ctx, "chat.image_refused", slog.String("reason", "no_audit_log"))
		t.say(domain.T(t.loc, domain.MsgImageAuditDown))
		return
	}
	actx, cancel := context.WithTimeout(ctx, a.cfg.ApprovalTimeout)
	err := a.peers.Images.RecordImage(actx, ImageRecord{JobID: t.jobID, SessionID: t.sess.ID, Data: img.GetData(), MIMEType: img.GetMimeType(),
		Provider: vision.Provider(), Model: vision.Model()})
	cancel()
	if err != nil {
		// Fail closed: an image that is not on record is not sent.
		log.ErrorContext(ctx, "chat.image_not_recorded", slog.String("kind", errKind(err)), slog.Any("error", err))
		t.say(domain.T(t.loc, domain.MsgImageAuditDown))
		return
	}
	caption := strings.TrimSpace(t.req.GetText())
	question := caption
	if question == "" {
		question = domain.T(t.loc, domain.MsgImagePrompt)
	}
	policy := a.cfg.Policy
	if policy == "" {
		policy = domain.DefaultPolicy(t.loc)
	}
	system := domain.SystemPrompt(a.cfg.Persona, policy, domain.Overlay{Locale: t.loc, JobID: t.jobID, Route: "CHAT", LocalOnly: t.sess.LocalOnly,
		Now: t.now.In(a.cfg.Location).Format("2006-01-02 15:04 MST")})
	mctx, span := a.cfg.Tracer.Start(ctx, "chat "+vision.Model(), trace.WithAttributes(
		attribute.String("gen_ai.system", vision.Provider()), attribute.String("gen_ai.request.model", vision.Model()),
		attribute.Int("picoclaw.images", 1)))
	res, err := vision.Chat(mctx, llm.Request{Timeout: a.cfg.ChatTimeout, LocalOnly: t.sess.LocalOnly, Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: system},
		{Role: llm.RoleUser, Content: question, Images: []llm.Image{{Data: img.GetData(), MIMEType: img.GetMimeType()}}},
	}})
	if err == nil && strings.TrimSpace(res.Text) == "" {
		err = fmt.Errorf("%w: empty answer", llm.ErrBadResponse)
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "vision model failed")
	}
	span.End()
	if err != nil {
		// The turn is told, not retried, even when the failure is transient: a retried turn
		// would record the picture again, and the user can simply send it again. (A local
		// model that was missing or unreachable has already had its one restart and retry of
		// the call, under the one record above.)
		log.ErrorContext(ctx, "chat.vision_failed", slog.String("provider", vision.Provider()), slog.String("model", vision.Model()),
			slog.String("error_code", llm.Code(err)), slog.Any("error", err))
		if lme, ok := errors.AsType[*llm.LocalModelError](err); ok {
			// Someone has to act: say what to run.
			t.say(domain.VisionModelUnavailable(t.loc, lme.Model, lme.Missing))
			return
		}
		t.say(domain.T(t.loc, domain.MsgVisionModelDown, vision.Provider()+"/"+vision.Model()))
		return
	}
	log.InfoContext(ctx, "chat.image_answered", slog.String("provider", res.Provider), slog.String("model", res.Model),
		slog.Int64("input_tokens", res.Usage.InputTokens), slog.Int64("output_tokens", res.Usage.OutputTokens))
	t.say(strings.TrimSpace(res.Text))
	// Memory keeps the words, never the picture.
	remembered := "[image]"
	if caption != "" {
		remembered += " " + caption
	}
	a.remember(t, remembered)
}
