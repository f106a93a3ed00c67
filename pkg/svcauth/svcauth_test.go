package svcauth_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

func TestServiceTokenProvesTheCallerToItsAudienceOnly(t *testing.T) {
	chat := testinfra.Credentials(t, svcauth.ChatMio)
	approval := testinfra.Credentials(t, svcauth.Approval)
	executor := testinfra.Credentials(t, svcauth.Executor)
	now := time.Now()
	tok, err := chat.ServiceToken(svcauth.Approval, now)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := approval.VerifyService(tok, now); err != nil || got != svcauth.ChatMio {
		t.Fatalf("VerifyService = %q, %v", got, err)
	}
	// A token made out to approval does not open the executor.
	if _, err := executor.VerifyService(tok, now); !errors.Is(err, svcauth.ErrUnauthenticated) {
		t.Fatalf("executor accepted a token for approval: %v", err)
	}
	// Expired (beyond the leeway).
	if _, err := testinfra.Credentials(t, svcauth.Approval).VerifyService(tok, now.Add(6*time.Minute)); !errors.Is(err, svcauth.ErrUnauthenticated) {
		t.Fatalf("expired token accepted: %v", err)
	}
	// Cached tokens are reused and renewed before they expire.
	again, _ := chat.ServiceToken(svcauth.Approval, now.Add(time.Minute))
	if again != tok {
		t.Fatal("token not reused within its life")
	}
	renewed, _ := chat.ServiceToken(svcauth.Approval, now.Add(3*time.Minute))
	if renewed == tok {
		t.Fatal("token not renewed after half its life")
	}
}

func TestForgedAndConfusedTokensAreRefused(t *testing.T) {
	approval := testinfra.Credentials(t, svcauth.Approval)
	now := time.Now()
	// A key the suite does not know signs a token that claims to be chat-mio.
	rogueKey, err := svcauth.Generate(svcauth.ChatMio)
	if err != nil {
		t.Fatal(err)
	}
	rogue, err := svcauth.NewCredentials(svcauth.ChatMio, rogueKey.Private, replace(testinfra.TestPublicKeys(), svcauth.ChatMio, rogueKey.PublicEntry()))
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := rogue.ServiceToken(svcauth.Approval, now)
	if _, err := approval.VerifyService(tok, now); !errors.Is(err, svcauth.ErrUnauthenticated) {
		t.Fatalf("token of an unknown key accepted: %v", err)
	}
	// A principal assertion is not a service token, and the other way round.
	gw := testinfra.Credentials(t, svcauth.GatewayLine)
	assertion, err := gw.Vouch("line", "U1", now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := approval.VerifyService(assertion, now); err == nil {
		t.Fatal("a principal assertion passed as a service token")
	}
	svcTok, _ := gw.ServiceToken(svcauth.Approval, now)
	if _, err := approval.VerifyPrincipal(svcTok, now); err == nil {
		t.Fatal("a service token passed as a principal assertion")
	}
	for _, bad := range []string{"", "x", strings.Repeat("a.", 3), tok[:len(tok)-4] + "AAAA"} {
		if _, err := approval.VerifyService(bad, now); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}

func TestOnlyAChannelsVoucherVouchesForItsUsers(t *testing.T) {
	now := time.Now()
	approval := testinfra.Credentials(t, svcauth.Approval)
	for _, tc := range []struct {
		signer, channel string
		ok              bool
	}{
		{svcauth.GatewayLine, "line", true},
		{svcauth.GatewaySlack, "slack", true},
		{svcauth.CLI, "cli", true},
		{svcauth.GatewayLine, "slack", false},
		{svcauth.ChatMio, "line", false},
		{svcauth.Executor, "cli", false},
		{svcauth.GatewaySlack, "rest", false},
	} {
		tok, err := testinfra.Credentials(t, tc.signer).Vouch(tc.channel, "U1", now)
		if (err == nil) != tc.ok {
			t.Fatalf("%s vouching for %s: %v", tc.signer, tc.channel, err)
		}
		if err != nil {
			continue
		}
		p, err := approval.VerifyPrincipal(tok, now)
		if err != nil || p.Channel != tc.channel || p.User != "U1" || p.Voucher != tc.signer {
			t.Fatalf("VerifyPrincipal = %+v, %v", p, err)
		}
		if _, err := approval.VerifyPrincipal(tok, now.Add(svcauth.PrincipalTTL+time.Minute)); err == nil {
			t.Fatal("expired assertion accepted")
		}
	}
}

func TestCredentialsNameWhatIsWrong(t *testing.T) {
	keys, err := svcauth.GenerateSuite()
	if err != nil {
		t.Fatal(err)
	}
	pubs := svcauth.PublicEntries(keys)
	for _, tc := range []struct {
		name, self, key string
		pubs            []string
		want            string
	}{
		{"no key", svcauth.Approval, "", pubs, "no service key"},
		{"not a key", svcauth.Approval, "change-me", pubs, "Ed25519"},
		{"someone else's key", svcauth.Approval, keys[svcauth.ChatMio].Private, pubs, "not approval's"},
		{"missing public key", svcauth.Approval, keys[svcauth.Approval].Private, pubs[1:], "missing for gateway-line"},
		{"unknown identity", "mallory", keys[svcauth.Approval].Private, pubs, "unknown identity"},
		{"bad entry", svcauth.Approval, keys[svcauth.Approval].Private, append(pubs, "nobody"), "want <identity>=<base64>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svcauth.NewCredentials(tc.self, tc.key, tc.pubs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := svcauth.NewCredentials(svcauth.Approval, keys[svcauth.Approval].Private, pubs); err != nil {
		t.Fatal(err)
	}
}

func TestMatrixDeniesUnlessAllowed(t *testing.T) {
	p := svcauth.NewPolicy(svcauth.Matrix())
	for _, r := range svcauth.Matrix() {
		if len(r.Callers) == 0 || len(r.Servers) == 0 {
			t.Fatalf("%s has no callers or servers", r.Procedure)
		}
		for _, id := range svcauth.Identities() {
			_, ok := p.Allowed(id, r.Procedure)
			want := false
			for _, c := range r.Callers {
				want = want || c == id
			}
			if ok != want {
				t.Fatalf("%s calling %s: allowed=%v", id, r.Procedure, ok)
			}
		}
	}
	if _, ok := p.Allowed(svcauth.ChatMio, "/picoclaw.approval.v1.ApprovalService/Unknown"); ok {
		t.Fatal("an unlisted procedure is allowed")
	}
	// The rules the suite's promise rests on.
	for _, tc := range []struct{ caller, proc string }{
		{svcauth.Executor, "/picoclaw.approval.v1.ApprovalService/Approve"},
		{svcauth.ChatMio, "/picoclaw.approval.v1.ApprovalService/ClaimJob"},
		{svcauth.RouterShiro, "/picoclaw.approval.v1.ApprovalService/SetAutoApprove"},
		{svcauth.GatewayLine, "/picoclaw.gateway.v1.NotificationService/Push"},
		{svcauth.Executor, "/picoclaw.approval.v1.ApprovalService/RequestApproval"},
	} {
		if _, ok := p.Allowed(tc.caller, tc.proc); ok {
			t.Fatalf("%s may call %s", tc.caller, tc.proc)
		}
	}
}

func TestMatrixDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), svcauth.MatrixMarkdown()) {
		t.Fatalf("docs/security.md does not hold the current matrix; put this table in it:\n%s", svcauth.MatrixMarkdown())
	}
}

func replace(entries []string, id, with string) []string {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		if strings.HasPrefix(e, id+"=") {
			e = with
		}
		out = append(out, e)
	}
	return out
}
