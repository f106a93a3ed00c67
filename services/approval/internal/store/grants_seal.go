package store

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// GrantSealKey derives the grant seal from the audit key (kept apart from the audit MACs).
func GrantSealKey(auditKey []byte) []byte {
	m := hmac.New(sha256.New, auditKey)
	m.Write([]byte("picoclaw auto-approve grant seal"))
	return m.Sum(nil)
}

// grantSeal seals the grant for one place of storage (both engines): the MAC covers that
// place's name too, so a sealed value copied elsewhere does not open.
type grantSeal struct {
	key   []byte
	place string
	log   *slog.Logger
}

func newGrantSeal(key []byte, place string, log *slog.Logger) grantSeal {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return grantSeal{key: key, place: place, log: log}
}

type sealedGrant struct {
	Grant json.RawMessage `json:"grant"`
	MAC   string          `json:"mac"`
}

func (s grantSeal) mac(grant []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(s.place))
	m.Write([]byte{0})
	m.Write(grant)
	return m.Sum(nil)
}

// seal is the stored form of g.
func (s grantSeal) seal(g domain.Grant) ([]byte, error) {
	if len(s.key) == 0 {
		return nil, errors.New("grant store has no seal key")
	}
	raw, err := json.Marshal(g)
	if err != nil {
		return nil, err
	}
	return json.Marshal(sealedGrant{Grant: raw, MAC: base64.StdEncoding.EncodeToString(s.mac(raw))})
}

// open checks the seal; a value that fails it is not a grant.
func (s grantSeal) open(ctx context.Context, b []byte) *domain.Grant {
	var sg sealedGrant
	if err := json.Unmarshal(b, &sg); err != nil || len(s.key) == 0 {
		s.log.ErrorContext(ctx, "approval.grant_unsealed", slog.String("effect", "ignored: Auto-Approve is off"))
		return nil
	}
	want, err := base64.StdEncoding.DecodeString(sg.MAC)
	if err != nil || !hmac.Equal(want, s.mac(sg.Grant)) {
		s.log.ErrorContext(ctx, "approval.grant_forged", slog.String("effect", "ignored: Auto-Approve is off"))
		return nil
	}
	var g domain.Grant
	if err := json.Unmarshal(sg.Grant, &g); err != nil {
		return nil
	}
	return &g
}
