package domain

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
)

// ErrTampered: the audit log or its read model was changed behind the service's back (an event
// edited, re-hashed, reordered or deleted, or a job row that disagrees with its events).
var ErrTampered = fault.WithReason(fault.DataLoss, "AUDIT_TAMPERED", "audit log tampered")

// MinAuditKeyBytes is the shortest audit key accepted.
const MinAuditKeyBytes = 32

// Keyring holds the audit HMAC keys: the current one seals new events, older ones still verify
// the events they sealed. The database never holds a key, only its id.
type Keyring struct {
	current string
	keys    map[string][]byte
}

// NewKeyring builds a keyring from the current key and the keys it replaced.
func NewKeyring(current []byte, old ...[]byte) (*Keyring, error) {
	k := &Keyring{keys: map[string][]byte{}}
	for i, key := range append([][]byte{current}, old...) {
		if len(key) < MinAuditKeyBytes {
			if i == 0 {
				return nil, fmt.Errorf("audit key: at least %d bytes required, got %d", MinAuditKeyBytes, len(key))
			}
			return nil, fmt.Errorf("old audit key %d: at least %d bytes required, got %d", i, MinAuditKeyBytes, len(key))
		}
		k.keys[KeyID(key)] = append([]byte(nil), key...)
	}
	k.current = KeyID(current)
	return k, nil
}

// KeyID names a key without revealing it: the start of an HMAC of a fixed label under the key.
func KeyID(key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("picoclaw audit key id"))
	return "k" + hex.EncodeToString(m.Sum(nil)[:6])
}

// CurrentID is the id of the key that seals new events.
func (k *Keyring) CurrentID() string { return k.current }

// canonical is the sealed encoding of an event: a JSON array, so no two different events share
// an encoding.
func canonical(e Event) []byte {
	b, _ := json.Marshal([]any{"picoclaw.audit.v2", e.KeyID, e.JobID, e.Seq, string(e.Type), e.Actor.ID, e.Actor.Channel,
		e.Actor.DisplayName, e.Channel, string(e.Payload), e.PolicyRule, e.At.UTC().Format(time.RFC3339Nano), e.PrevHash})
	return b
}

// mac is the keyed hash of e under the key e names; ok is false for an unknown key.
func (k *Keyring) mac(e Event) (string, bool) {
	if k == nil {
		return "", false
	}
	key, ok := k.keys[e.KeyID]
	if !ok {
		return "", false
	}
	m := hmac.New(sha256.New, key)
	m.Write(canonical(e))
	return hex.EncodeToString(m.Sum(nil)), true
}

// legacyHash is the unkeyed sha256 chain of events written before the chain was keyed.
func legacyHash(e Event) string {
	b, _ := json.Marshal([]any{e.JobID, e.Seq, string(e.Type), e.Actor.ID, e.Actor.Channel, e.Actor.DisplayName,
		e.Channel, string(e.Payload), e.PolicyRule, e.At.UTC().Format(time.RFC3339Nano), e.PrevHash})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Seal numbers and chains a draft after the stream's last event (seq prevSeq, hash prevHash),
// under the current key.
func (k *Keyring) Seal(stream string, prevSeq int64, prevHash string, d Draft) (Event, error) {
	if k == nil {
		return Event{}, errors.New("seal: no audit key")
	}
	payload := d.Payload
	if payload == nil {
		payload = struct{}{}
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return Event{}, fmt.Errorf("encode %s payload: %w", d.Type, err)
	}
	e := Event{
		JobID: stream, Seq: prevSeq + 1, Type: d.Type, Actor: d.Actor, Channel: d.Channel,
		Payload: b, PolicyRule: d.PolicyRule, PrevHash: prevHash, KeyID: k.current, At: Normalize(d.At),
	}
	e.Hash, _ = k.mac(e)
	return e, nil
}

// FindingKind classifies what verification found; the values are stable (CLI output, logs).
type FindingKind string

const (
	// FindingEdited: the event's content does not match its keyed hash.
	FindingEdited FindingKind = "edited"
	// FindingRecomputed: the hash is a plain sha256 of the content, not the keyed HMAC: the chain
	// was recomputed by someone without the key.
	FindingRecomputed FindingKind = "recomputed"
	// FindingReordered: the event was sealed at another position of its stream.
	FindingReordered FindingKind = "reordered"
	// FindingUnknownKey: the event names a key the keyring does not hold.
	FindingUnknownKey FindingKind = "unknown_key"
	// FindingUnkeyed: an event without a key id written after the chain was keyed.
	FindingUnkeyed FindingKind = "unkeyed"
	// FindingMissingEvents: sequence numbers are missing (events deleted from the middle).
	FindingMissingEvents FindingKind = "missing_events"
	// FindingBrokenLink: prev_hash is not the hash of the event before.
	FindingBrokenLink FindingKind = "broken_link"
	// FindingMissingLast: the read model records more events than the log holds (the last
	// events were deleted).
	FindingMissingLast FindingKind = "missing_last_events"
	// FindingAnchor: the read model's version and last hash do not name the log's last event.
	FindingAnchor FindingKind = "anchor_mismatch"
	// FindingReadModel: a field of the job row disagrees with the job rebuilt from its events.
	FindingReadModel FindingKind = "read_model_mismatch"
	// FindingNoReadModel: a job has events but no row.
	FindingNoReadModel FindingKind = "missing_job_row"
	// FindingUndecodable: the events do not fold into a job.
	FindingUndecodable FindingKind = "undecodable"
)

// Finding is one problem in one stream.
type Finding struct {
	Stream string      `json:"job_id"`
	Seq    int64       `json:"seq,omitempty"`
	Kind   FindingKind `json:"kind"`
	Field  string      `json:"field,omitempty"`
	Detail string      `json:"detail"`
}

func (f Finding) String() string {
	where := f.Stream
	if f.Seq > 0 {
		where += fmt.Sprintf(" event %d", f.Seq)
	}
	return fmt.Sprintf("%s: %s: %s", where, f.Kind, f.Detail)
}

// TamperError carries every finding; it is ErrTampered.
type TamperError struct{ Findings []Finding }

func (e *TamperError) Error() string {
	parts := make([]string, 0, len(e.Findings))
	for _, f := range e.Findings {
		parts = append(parts, f.String())
	}
	return ErrTampered.Error() + ": " + strings.Join(parts, "; ")
}

func (e *TamperError) Unwrap() error { return ErrTampered }

// asError is nil without findings, a *TamperError otherwise.
func asError(fs []Finding) error {
	if len(fs) == 0 {
		return nil
	}
	return &TamperError{Findings: fs}
}

// CheckChain verifies one stream's events (ordered by seq): numbered 1..n without gaps, each
// prev_hash the hash before it, each hash the keyed HMAC of its content.
func (k *Keyring) CheckChain(events []Event) []Finding {
	var out []Finding
	prev, next := "", int64(1)
	for _, e := range events {
		add := func(kind FindingKind, format string, args ...any) {
			out = append(out, Finding{Stream: e.JobID, Seq: e.Seq, Kind: kind, Detail: fmt.Sprintf(format, args...)})
		}
		gap := e.Seq != next
		if gap {
			if e.Seq > next {
				add(FindingMissingEvents, "events %d..%d are missing", next, e.Seq-1)
			} else {
				add(FindingReordered, "sequence number %d after %d", e.Seq, next-1)
			}
		}
		switch kind, detail := k.checkHash(e, events); {
		case kind != "":
			add(kind, "%s", detail)
		case !gap && e.PrevHash != prev:
			add(FindingBrokenLink, "prev_hash is not the hash of event %d", e.Seq-1)
		}
		prev, next = e.Hash, e.Seq+1
	}
	return out
}

// checkHash classifies an event whose hash is wrong; it returns "" when the hash is right.
func (k *Keyring) checkHash(e Event, all []Event) (FindingKind, string) {
	if e.KeyID == "" {
		if !e.Legacy {
			return FindingUnkeyed, "no key id on an event written after the chain was keyed"
		}
		if legacyHash(e) != e.Hash {
			return FindingEdited, "content does not match its (pre-key) hash"
		}
		return "", ""
	}
	want, ok := k.mac(e)
	if !ok {
		return FindingUnknownKey, fmt.Sprintf("key %q is not in the keyring", e.KeyID)
	}
	if hmac.Equal([]byte(want), []byte(e.Hash)) {
		return "", ""
	}
	sum := sha256.Sum256(canonical(e))
	if hex.EncodeToString(sum[:]) == e.Hash || legacyHash(e) == e.Hash {
		return FindingRecomputed, "hash is a plain sha256 of the content, not the keyed HMAC: the chain was recomputed without the key"
	}
	// Sealed at another position: the content verifies under another sequence number.
	for _, other := range all {
		if other.Seq == e.Seq {
			continue
		}
		moved := e
		moved.Seq = other.Seq
		if h, _ := k.mac(moved); hmac.Equal([]byte(h), []byte(e.Hash)) {
			return FindingReordered, fmt.Sprintf("sealed as event %d, stored as event %d", other.Seq, e.Seq)
		}
	}
	return FindingEdited, "content does not match its keyed hash"
}

// VerifyChain returns nil when the stream's chain verifies, a *TamperError otherwise.
func (k *Keyring) VerifyChain(events []Event) error {
	return asError(k.CheckChain(events))
}

// ReadModel is a job row as stored, including the columns the job value does not carry.
type ReadModel struct {
	Job          Job
	Approver     string
	AutoApproved bool
}

// CheckJob verifies a job's events and their agreement with its row: the chain, the anchor
// (version and last_hash name the last event) and the fields that decide what may run. rm is nil
// when the job has no row. It returns the job rebuilt from the events (zero when they do not
// fold) and the findings; patch reports whether a differing stored patch counts (the claim
// re-hashes that copy itself and records hash_mismatch).
func (k *Keyring) CheckJob(id string, rm *ReadModel, events []Event, patch bool) (Job, []Finding) {
	out := k.CheckChain(events)
	add := func(kind FindingKind, field, format string, args ...any) {
		out = append(out, Finding{Stream: id, Kind: kind, Field: field, Detail: fmt.Sprintf(format, args...)})
	}
	if rm == nil {
		if len(events) > 0 {
			add(FindingNoReadModel, "", "%d events but no job row", len(events))
		}
		return Job{}, out
	}
	var last Event
	if n := len(events); n > 0 {
		last = events[n-1]
	}
	switch {
	case rm.Job.Version > last.Seq:
		add(FindingMissingLast, "version", "job row records %d events, the log holds %d: the last events were deleted", rm.Job.Version, last.Seq)
	case rm.Job.Version != last.Seq || rm.Job.LastHash != last.Hash:
		add(FindingAnchor, "last_hash", "job row (version %d) does not name the log's last event %d", rm.Job.Version, last.Seq)
	}
	if len(events) == 0 {
		return Job{}, out
	}
	rebuilt, err := Rebuild(events)
	if err != nil {
		add(FindingUndecodable, "", "%v", err)
		return Job{}, out
	}
	cmp := func(field string, stored, logged any) {
		if fmt.Sprint(stored) != fmt.Sprint(logged) {
			add(FindingReadModel, field, "job row says %q, the events say %q", fmt.Sprint(stored), fmt.Sprint(logged))
		}
	}
	j := rm.Job
	cmp("status", j.Status, rebuilt.Status)
	cmp("content_hash", j.ContentHash, rebuilt.ContentHash)
	cmp("approver", rm.Approver, rebuilt.DecidedBy.ID)
	cmp("decided_by", j.DecidedBy, rebuilt.DecidedBy)
	cmp("auto_approved", rm.AutoApproved, rebuilt.AutoApproved)
	cmp("auto_approved", j.AutoApproved, rebuilt.AutoApproved)
	cmp("grant_id", j.GrantID, rebuilt.GrantID)
	cmp("claimed_by", j.ClaimedBy, rebuilt.ClaimedBy)
	cmp("route", j.Route, rebuilt.Route)
	cmp("task_type", j.TaskType, rebuilt.TaskType)
	if patch && j.Patch != rebuilt.Patch {
		add(FindingReadModel, "patch", "the stored patch is not the requested one")
	}
	return rebuilt, out
}

// VerifyJob is CheckJob as an error: nil, or a *TamperError.
func (k *Keyring) VerifyJob(id string, rm *ReadModel, events []Event) (Job, error) {
	j, fs := k.CheckJob(id, rm, events, false)
	return j, asError(fs)
}
