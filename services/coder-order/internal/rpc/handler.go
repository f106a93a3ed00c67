// Package rpc maps the Connect API of coder-order onto its use cases.
package rpc

import "github.com/picoclaw-suite/picoclaw/gen/picoclaw/coder/v1/coderv1connect"

// Handler implements coderv1connect.CoderServiceHandler.
type Handler struct {
	coderv1connect.UnimplementedCoderServiceHandler
}

var _ coderv1connect.CoderServiceHandler = (*Handler)(nil)
