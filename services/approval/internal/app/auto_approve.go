package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// Known scope values (read-only tables).
var (
	taskTypes = []string{"design", "codegen", "review", "refactor", "ops", "docs"}
	routes    = []string{"CHAT", "PLAN", "ANALYZE", "OPS", "RESEARCH", "CODE", "CODE1", "CODE2", "CODE3"}
	// operationNames may appear in denied_operations: types, actions and flags.
	operationNames = []string{"file_edit", "shell_command", "git_operation", "browser",
		"create", "update", "delete", "append", "rename", "patch", "run", "add", "commit", "reset", "checkout", "push",
		"chrome_navigate", "chrome_click_element", "chrome_fill_or_select", "chrome_get_web_content", "chrome_screenshot",
		"chrome_keyboard", "chrome_click", "chrome_get_text",
		"broad_overwrite", "send_sensitive", "push_public", "execute_script", "shell",
		"force_push", "network", "permission", "outside_workspace", "remote_code", "privilege", "background",
		"dynamic_command", "shell_unparsed"}
)

// GrantInput is an Auto-Approve request (`/auto-approve on ...` or PUT /v1/auto-approve).
type GrantInput struct {
	TTL              time.Duration
	TaskTypes        []string
	Routes           []string
	PathPrefixes     []string
	DeniedOperations []string
	// AllowedOperations opt in to what a grant never covers otherwise (domain.GrantOperations).
	AllowedOperations []string
	Reason            string
}

// bare reports a request without any scope: it gets the configured default scope.
func (in GrantInput) bare() bool {
	return len(in.TaskTypes) == 0 && len(in.Routes) == 0 && len(in.PathPrefixes) == 0 && len(in.AllowedOperations) == 0 &&
		len(in.DeniedOperations) == 0
}

// GrantStatus is the state of Auto-Approve.
type GrantStatus struct {
	Grant *domain.Grant
	// Unavailable: the grant store cannot be reached, so Auto-Approve counts as off.
	Unavailable bool
}

// AutoApproveStatus returns the active grant, if any.
func (s *Service) AutoApproveStatus(ctx context.Context) GrantStatus {
	g, err := s.grantInForce(ctx)
	if err != nil {
		s.log.WarnContext(ctx, "approval.auto_approve_unavailable", slog.String("error", err.Error()))
		return GrantStatus{Unavailable: true}
	}
	if g == nil {
		return GrantStatus{}
	}
	return GrantStatus{Grant: g}
}

// EnableAutoApprove stores a grant with a capped TTL and audits it.
func (s *Service) EnableAutoApprove(ctx context.Context, actor domain.Actor, in GrantInput) (domain.Grant, error) {
	if err := s.approvers.Check(actor); err != nil {
		s.auditGrantRefusal(ctx, "auto_approve_on", actor, err)
		return domain.Grant{}, err
	}
	if !s.cfg.AutoApproveAllowed {
		return domain.Grant{}, domain.Fail(domain.ErrPermission, domain.CodeAutoDisabled)
	}
	bare := in.bare()
	if bare {
		d := s.cfg.DefaultScope
		in.TaskTypes, in.PathPrefixes, in.Routes = d.TaskTypes, d.PathPrefixes, d.Routes
	}
	g, ttl, err := s.buildGrant(actor, in)
	if err != nil {
		return domain.Grant{}, err
	}
	g.DefaultScope = bare
	if err := s.putGrant(ctx, g, ttl, domain.RuleAutoApprove, actor); err != nil {
		return domain.Grant{}, err
	}
	s.log.InfoContext(ctx, "approval.auto_approve_enabled", slog.String("grant_id", g.ID),
		slog.Duration("ttl", ttl), slog.String("actor", actor.Channel+":"+actor.ID))
	return g, nil
}

// ValidateScope checks a scope's values (task types, routes, paths, operations) as a grant
// request would, for configuration checks at start.
func ValidateScope(in GrantInput) error {
	s := &Service{cfg: Config{DefaultGrantTTL: time.Hour, MaxGrantTTL: time.Hour}, now: time.Now}
	_, _, err := s.buildGrant(domain.Actor{}, in)
	return err
}

func (s *Service) buildGrant(actor domain.Actor, in GrantInput) (domain.Grant, time.Duration, error) {
	ttl := in.TTL
	switch {
	case ttl == 0:
		ttl = s.cfg.DefaultGrantTTL
	case ttl < 0:
		return domain.Grant{}, 0, domain.Fail(domain.ErrInvalid, domain.CodeTTLNegative)
	case ttl > s.cfg.MaxGrantTTL:
		return domain.Grant{}, 0, domain.Fail(domain.ErrInvalid, domain.CodeTTLTooLong, ttl, s.cfg.MaxGrantTTL)
	}
	if ttl < time.Second {
		return domain.Grant{}, 0, domain.Fail(domain.ErrInvalid, domain.CodeTTLTooShort)
	}
	check := func(kind fault.Term, vals, known []string, fold func(string) string) ([]string, error) {
		var out []string
		for _, v := range vals {
			v = fold(strings.TrimSpace(v))
			if v == "" {
				continue
			}
			if !slices.Contains(known, v) {
				return nil, domain.Fail(domain.ErrInvalid, domain.CodeUnknownValue, kind, strconv.Quote(v), strings.Join(known, ", "))
			}
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
		return out, nil
	}
	tasks, err := check(domain.TermTaskType, in.TaskTypes, taskTypes, strings.ToLower)
	if err != nil {
		return domain.Grant{}, 0, err
	}
	routes, err := check(domain.TermRoute, in.Routes, routes, func(r string) string { return strings.ToUpper(strings.TrimPrefix(r, "/")) })
	if err != nil {
		return domain.Grant{}, 0, err
	}
	denied, err := check(domain.TermOperation, in.DeniedOperations, operationNames, strings.ToLower)
	if err != nil {
		return domain.Grant{}, 0, err
	}
	allowed, err := check(domain.TermAllowedOperation, in.AllowedOperations, domain.GrantOperations, strings.ToLower)
	if err != nil {
		return domain.Grant{}, 0, err
	}
	var prefixes []string
	for _, p := range in.PathPrefixes {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		n, err := patch.NormalizePath(strings.TrimSuffix(p, "/"))
		if err != nil {
			return domain.Grant{}, 0, domain.FailWith(domain.ErrInvalid, err, domain.CodePathPrefix, strconv.Quote(p))
		}
		if !slices.Contains(prefixes, n) {
			prefixes = append(prefixes, n)
		}
	}
	if slices.Contains(allowed, domain.OpsShell) && len(prefixes) == 0 {
		return domain.Grant{}, 0, domain.Fail(domain.ErrInvalid, domain.CodeShellNeedsPath)
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	now := s.clock()
	return domain.Grant{
		ID: "grant_" + hex.EncodeToString(b[:]), TaskTypes: tasks, Routes: routes, PathPrefixes: prefixes,
		DeniedOperations: denied, AllowedOperations: allowed, CreatedBy: actor, Reason: in.Reason, CreatedAt: now, ExpiresAt: now.Add(ttl),
	}, ttl, nil
}

// DisableAutoApprove removes the grant at once and sends every auto-approved job that has not
// been claimed back to pending. It returns how many jobs were revoked.
func (s *Service) DisableAutoApprove(ctx context.Context, actor domain.Actor, reason string) (int, error) {
	if err := s.approvers.Check(actor); err != nil {
		s.auditGrantRefusal(ctx, "auto_approve_off", actor, err)
		return 0, err
	}
	// The audit log is the truth: "off" holds from the moment it is recorded, whatever the
	// cache does next (it is corrected on the next read if removing the grant fails here).
	grantID := ""
	if old, aerr := s.auditedGrant(ctx); aerr == nil && old != nil {
		grantID = old.ID
	}
	d := domain.Draft{Type: domain.EventAutoApproveDisabled, Actor: actor, Channel: actor.Channel, At: s.clock(),
		PolicyRule: domain.RuleAutoApprove, Payload: map[string]string{"grant_id": grantID, "reason": reason}}
	if aerr := s.store.Append(ctx, domain.StreamAutoApprove, []domain.Draft{d}); aerr != nil {
		return 0, fmt.Errorf("audit Auto-Approve off: %w", aerr)
	}
	_, err := s.grants.Delete(ctx)
	if err != nil {
		// Claims check the grant in force too, and fail closed while the cache is unreachable.
		s.log.WarnContext(ctx, "approval.auto_approve_unavailable", slog.String("error", err.Error()))
	}
	jobs, lerr := s.store.List(ctx, ListFilter{Statuses: []domain.Status{domain.StatusAutoApproved}, Limit: 500})
	if lerr != nil {
		return 0, lerr
	}
	n := 0
	for _, j := range jobs {
		got, uerr := s.store.Update(ctx, j.ID, func(cur domain.Job) ([]domain.Draft, error) {
			return cur.RevokeAutoApproval(domain.CodeRevokedSwitchedOff, s.clock()), nil
		})
		if uerr != nil {
			return n, uerr
		}
		if got.Status == domain.StatusPending {
			n++
		}
	}
	s.log.InfoContext(ctx, "approval.auto_approve_disabled", slog.String("grant_id", grantID), slog.Int("revoked_jobs", n),
		slog.Bool("cache_cleared", err == nil))
	return n, nil
}

func (s *Service) auditGrantRefusal(ctx context.Context, attempt string, actor domain.Actor, perr error) {
	d := domain.Draft{Type: domain.EventAccessRefused, Actor: actor, Channel: actor.Channel, At: s.clock(),
		PolicyRule: domain.RuleApproverList, Payload: domain.RejectedPayload{Attempt: attempt, Reason: perr.Error()}}
	if err := s.store.Append(ctx, domain.StreamAutoApprove, []domain.Draft{d}); err != nil {
		s.log.ErrorContext(ctx, "approval.audit_failed", slog.String("error", err.Error()))
	}
	s.log.WarnContext(ctx, "approval.refused_approver", slog.String("attempt", attempt), slog.String("actor", actor.Channel+":"+actor.ID))
}
