package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os/user"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1/chatv1connect"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/channel"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink/chatclient"
	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
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

func newChatCmd(g *globals) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use: "chat [--user NAME]", Short: "chat with a running suite (channel cli)", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runChat(cmd.Context(), g, name) },
	}
	cmd.Flags().StringVar(&name, "user", defaultUser(g), "your name; the session is cli:<name> (env PICOCLAW_USER)")
	return cmd
}

func runChat(ctx context.Context, g *globals, name string) error {
	creds, err := g.credentials()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", g.cfg.Services.CLI.Listen)
	if err != nil {
		return texts.Wrap(nil, err, txtListenFailed, g.cfg.Services.CLI.Listen, trouble(err))
	}
	return chatLoop(ctx, g, creds, name, g.cfg.Services.ChatMio.URL, ln)
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

// terminalChannel is the "cli" channel of the channel runtime (pkg/channel): lines typed in the
// terminal come in, replies and the notifications chat-mio pushes for the session (results that
// finish after the reply, alerts) are printed as text.
type terminalChannel struct {
	term    *terminal
	session string
	user    string
}

var _ channel.Channel = (*terminalChannel)(nil)

// line is the stored form of a typed line.
type line struct {
	ID   string    `json:"id"`
	Text string    `json:"text"`
	At   time.Time `json:"at"`
}

func (c *terminalChannel) Name() string { return "cli" }

func (c *terminalChannel) Decode(payload []byte) (channel.Event, error) {
	var l line
	if err := json.Unmarshal(payload, &l); err != nil || l.ID == "" {
		return channel.Event{}, fmt.Errorf("%w: terminal line %q", channel.ErrInvalid, payload)
	}
	return channel.Event{ID: l.ID, Kind: channel.KindMessage, SessionID: c.session, UserID: c.user, Text: l.Text, ReceivedAt: l.At}, nil
}

// Target accepts only this terminal's session.
func (c *terminalChannel) Target(sessionID string) (channel.Target, error) {
	if sessionID != c.session {
		return channel.Target{}, fmt.Errorf("%w: no terminal for session %q", channel.ErrUnknownSession, sessionID)
	}
	return channel.Target{}, nil
}

// Send prints replies: an answer under the prompt, a notification on lines of its own; then
// the prompt again. Every push is shown (there is nothing to deduplicate against).
func (c *terminalChannel) Send(_ context.Context, to channel.Target, _ string, replies []chatlink.Reply) (int, error) {
	var b strings.Builder
	for _, r := range replies {
		if to.Event == nil {
			b.WriteString("\n" + formatReply(r) + "\n")
		} else {
			b.WriteString(formatReply(r) + "\n")
		}
	}
	c.term.print(b.String() + "> ")
	return len(replies), nil
}

func formatReply(r chatlink.Reply) string {
	s := "Mio> " + strings.ReplaceAll(strings.TrimRight(r.Text, "\n"), "\n", "\n     ")
	for _, a := range r.Actions {
		s += fmt.Sprintf("\n     [%s] %s", a.Label, chatlink.Command(a))
	}
	// A terminal shows no pictures: it names where the job keeps each screenshot.
	for _, im := range r.Images {
		s += "\n     📷 " + im.Artifact
	}
	return s
}

// chatLoop reads lines, sends each to chat-mio and prints the replies until EOF or /quit.
// ln receives the notifications chat-mio pushes for the session (services.cli).
func chatLoop(ctx context.Context, g *globals, creds *svcauth.Credentials, name, chatURL string, ln net.Listener) error {
	return chatSession(ctx, g, creds, name, chatURL, ln, true)
}

// chatSession serves the terminal channel's notifications on ln and, when interactive, reads
// chat lines from the terminal until /quit or end of input; otherwise it only shows what the
// suite pushes to the terminal user until ctx ends (the suite running as a service).
func chatSession(ctx context.Context, g *globals, creds *svcauth.Credentials, name, chatURL string, ln net.Listener, interactive bool) error {
	term := &terminal{out: g.io.Out}
	session := "cli:" + name
	tel, err := telemetry.New(ctx, telemetry.Config{ServiceName: "picoclaw-cli", LogWriter: io.Discard}.FromEnv())
	if err != nil {
		return err
	}
	defer func() { _ = tel.Shutdown(context.WithoutCancel(ctx)) }()

	opts, err := rpcserver.ClientOptions(tel, 10*time.Minute, svcauth.Client(creds, svcauth.ChatMio))
	if err != nil {
		return err
	}
	// The terminal vouches for its user as a gateway does for a channel user.
	chat := chatclient.New(chatv1connect.NewChatServiceClient(rpcserver.NewHTTPClient(), chatURL, opts...), "cli", creds)
	ch := &terminalChannel{term: term, session: session, user: name}
	rt := channel.NewRuntime(ch, channel.RuntimeConfig{Locale: g.locale, Allow: channel.NewAllowlist([]string{name}), Tracer: "picoclaw-cli"},
		chat, tel.Logger, tel.TracerProvider, tel.Propagator)

	srvCtx, stopSrv := context.WithCancel(ctx)
	defer stopSrv()
	srv, err := rpcserver.New(rpcserver.Config{Name: "cli", Listener: ln, Credentials: creds, Limits: rpcserver.LimitsFrom(g.cfg)}, tel)
	if err != nil {
		return err
	}
	srv.Mount(gatewayv1connect.NewNotificationServiceHandler(channel.NewNotificationHandler(rt, "the terminal"), srv.HandlerOptions()...))
	srvDone := make(chan error, 1)
	go func() { srvDone <- srv.Run(srvCtx) }()
	defer func() { stopSrv(); <-srvDone }()

	if !interactive {
		<-ctx.Done()
		return nil
	}
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
	term.print(say(g.locale, txtChatWelcome, session) + "\n> ")
	for {
		var text string
		var ok bool
		select {
		case <-ctx.Done():
			return nil
		case text, ok = <-lines:
		}
		if !ok {
			term.print("\n")
			return nil
		}
		text = strings.TrimSpace(text)
		if text == "" {
			term.print("> ")
			continue
		}
		if text == "/quit" || text == "/exit" {
			return nil
		}
		id := fmt.Sprintf("cli-%d", time.Now().UnixNano())
		payload, err := json.Marshal(line{ID: id, Text: text, At: time.Now()})
		if err != nil {
			return err
		}
		// A line is answered at once, in order: the runtime's event path without the inbox.
		if err := rt.Handle(ctx, inbox.Delivery{Event: inbox.Event{ID: id, Key: session, Payload: payload}, Attempt: 1}); err != nil {
			if errors.Is(err, context.Canceled) {
				return nil
			}
			term.print(fmt.Sprintf("!! %s\n> ", sayError(err, g.locale)))
		}
	}
}
