// Package rpc maps the Connect API of chat-mio onto its use cases.
package rpc

import "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1/chatv1connect"

// Handler implements chatv1connect.ChatServiceHandler.
type Handler struct {
	chatv1connect.UnimplementedChatServiceHandler
}

var _ chatv1connect.ChatServiceHandler = (*Handler)(nil)
