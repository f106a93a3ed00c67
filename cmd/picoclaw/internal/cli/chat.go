package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/user"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1/chatv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	gatewayv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
)

func defaultUser(g *globals) string {
	if u := g.io.Getenv("PICOCLAW_USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "me"
}

func runChat(ctx context.Context, g *globals, args []string) error {
	fs := newFlags(g, "chat", commands()["chat"].usage)
	name := fs.String("user", defaultUser(g), "your name; the session is cli:<name> (env PICOCLAW_USER)")
	if _, err := parseInterspersed(fs, args); err != nil {
		return err
	}
	creds, err := g.credentials()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", g.cfg.Services.CLI.Listen)
	if err != nil {
		return fmt.Errorf("listen for notifications on %s (services.cli.listen): %w", g.cfg.Services.CLI.Listen, err)
	}
	return chatLoop(ctx, g, creds, *name, g.cfg.Services.ChatMio.URL, ln)
}

// terminal serializes writes from the prompt loop and from pushed notifications.
type terminal struct {
	mu  sync.Mutex
	out io.Writer
}

func (t *terminal) print(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprint(t.out, s)
}

// notifications serves gateway.v1 NotificationService for cli sessions: results that finish
// after the reply (and alerts) are printed in the terminal.
type notifications struct {
	term    *terminal
	session string
}

func (n *notifications) Push(_ context.Context, req *gatewayv1.PushRequest) (*gatewayv1.PushResponse, error) {
	if req.GetSessionId() != n.session {
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("no terminal for session %q", req.GetSessionId()))
	}
	var b strings.Builder
	for _, m := range req.GetMessages() {
		b.WriteString("\n" + formatMessage(m) + "\n")
	}
	n.term.print(b.String() + "> ")
	return &gatewayv1.PushResponse{Delivered: int32(len(req.GetMessages()))}, nil
}

func formatMessage(m *commonv1.ReplyMessage) string {
	s := "Mio> " + strings.ReplaceAll(strings.TrimRight(m.GetText(), "\n"), "\n", "\n     ")
	for _, a := range m.GetActions() {
		switch a.GetKind() {
		case commonv1.ActionKind_ACTION_KIND_APPROVE:
			s += fmt.Sprintf("\n     [%s] /approve %s", a.GetLabel(), a.GetJobId())
		case commonv1.ActionKind_ACTION_KIND_DENY:
			s += fmt.Sprintf("\n     [%s] /deny %s", a.GetLabel(), a.GetJobId())
		case commonv1.ActionKind_ACTION_KIND_PICK:
			s += fmt.Sprintf("\n     [%s] /pick %s %s", a.GetLabel(), a.GetJobId(), a.GetValue())
		}
	}
	return s
}

// chatLoop reads lines, sends each to chat-mio and prints the replies until EOF or /quit.
// ln receives the notifications chat-mio pushes for the session (services.cli).
func chatLoop(ctx context.Context, g *globals, creds *svcauth.Credentials, name, chatURL string, ln net.Listener) error {
	term := &terminal{out: g.io.Out}
	session := "cli:" + name
	tel, err := telemetry.New(ctx, telemetry.Config{ServiceName: "picoclaw-cli", LogWriter: io.Discard}.FromEnv())
	if err != nil {
		return err
	}
	defer func() { _ = tel.Shutdown(context.WithoutCancel(ctx)) }()

	srvCtx, stopSrv := context.WithCancel(ctx)
	defer stopSrv()
	srv, err := rpcserver.New(rpcserver.Config{Name: "cli", Listener: ln, Credentials: creds, Limits: rpcserver.LimitsFrom(g.cfg)}, tel)
	if err != nil {
		return err
	}
	srv.Mount(gatewayv1connect.NewNotificationServiceHandler(&notifications{term: term, session: session}, srv.HandlerOptions()...))
	srvDone := make(chan error, 1)
	go func() { srvDone <- srv.Run(srvCtx) }()
	defer func() { stopSrv(); <-srvDone }()

	opts, err := rpcserver.ClientOptions(tel, 10*time.Minute, svcauth.Client(creds, svcauth.ChatMio))
	if err != nil {
		return err
	}
	client := chatv1connect.NewChatServiceClient(rpcserver.NewHTTPClient(), chatURL, opts...)

	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(g.io.In)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	term.print(fmt.Sprintf("session %s — /help for commands, /quit to leave\n> ", session))
	for {
		var line string
		var ok bool
		select {
		case <-ctx.Done():
			return nil
		case line, ok = <-lines:
		}
		if !ok {
			term.print("\n")
			return nil
		}
		line = strings.TrimSpace(line)
		if line == "" {
			term.print("> ")
			continue
		}
		if line == "/quit" || line == "/exit" {
			return nil
		}
		// The terminal vouches for its user as a gateway does for a channel user.
		assertion, err := creds.Vouch("cli", name, time.Now())
		if err != nil {
			return err
		}
		mctx := svcauth.WithPrincipal(ctx, svcauth.Principal{Channel: "cli", User: name, Raw: assertion})
		res, err := client.HandleMessage(mctx, &chatv1.HandleMessageRequest{
			SessionId:  session,
			Channel:    "cli",
			UserId:     name,
			Text:       line,
			EventId:    fmt.Sprintf("cli-%d", time.Now().UnixNano()),
			ReceivedAt: timestamppb.Now(),
			Locale:     g.locale,
		})
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return nil
			}
			term.print(fmt.Sprintf("!! %v\n> ", err))
			continue
		}
		var b strings.Builder
		for _, m := range res.GetMessages() {
			b.WriteString(formatMessage(m) + "\n")
		}
		term.print(b.String() + "> ")
	}
}
