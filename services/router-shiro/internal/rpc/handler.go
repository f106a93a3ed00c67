// Package rpc maps the Connect API of router-shiro onto its use cases.
package rpc

import "github.com/picoclaw-suite/picoclaw/gen/picoclaw/router/v1/routerv1connect"

// Handler implements routerv1connect.RouterServiceHandler.
type Handler struct {
	routerv1connect.UnimplementedRouterServiceHandler
}

var _ routerv1connect.RouterServiceHandler = (*Handler)(nil)
