// Package rpc maps the Connect API of approval onto its use cases.
package rpc

import "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"

// Handler implements approvalv1connect.ApprovalServiceHandler.
type Handler struct {
	approvalv1connect.UnimplementedApprovalServiceHandler
}

var _ approvalv1connect.ApprovalServiceHandler = (*Handler)(nil)
