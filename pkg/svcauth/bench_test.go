package svcauth

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
)

// The cost authentication adds to one internal call: the client's header (a cached token) and
// the server's check (a cached verification, the matrix, the principal), then the same with a
// signature check on every call (a token seen for the first time).
func BenchmarkAuthPerCall(b *testing.B) {
	keys, err := GenerateSuite()
	if err != nil {
		b.Fatal(err)
	}
	load := func(id string) *Credentials {
		c, err := NewCredentials(id, keys[id].Private, PublicEntries(keys))
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	chat, approval, gw := load(ChatMio), load(Approval), load(GatewayLine)
	assertion, err := gw.Vouch("line", "U1", time.Now())
	if err != nil {
		b.Fatal(err)
	}
	ctx := WithPrincipal(context.Background(), Principal{Raw: assertion})
	client := &clientInterceptor{creds: chat, target: Approval}
	proc := approvalv1connect.ApprovalServiceApproveProcedure
	b.Run("cached", func(b *testing.B) {
		a := NewAuthorizer(approval, nil)
		for b.Loop() {
			h := http.Header{}
			if err := client.set(ctx, h); err != nil {
				b.Fatal(err)
			}
			if _, err := a.authorize(ctx, proc, h); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("first-sight", func(b *testing.B) {
		h := http.Header{}
		if err := client.set(ctx, h); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			// A fresh authorizer's credentials have seen neither token: two signature checks.
			fresh := load(Approval)
			a := NewAuthorizer(fresh, nil)
			if _, err := a.authorize(ctx, proc, h); err != nil {
				b.Fatal(err)
			}
		}
	})
}
