package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/picoclaw-suite/picoclaw/pkg/channel"
)

// gatewayChannels are the channels whose gateways keep dead letters, in listing order.
var gatewayChannels = []string{"line", "slack"}

// newDeadLettersCmd is `picoclaw deadletters list|show|replay|drop`: the dead letters of the
// gateways (events that could not be handled, replies and pushes that could not be sent) over
// each gateway's REST API, with the approver's token (PICOCLAW_TOKEN).
func newDeadLettersCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use: "deadletters", Short: "list, show, replay or drop the gateways' dead letters (events not handled, replies and pushes not sent)",
		Args: groupArgs, RunE: groupRun,
	}
	var gatewayURL string
	var output outputFlag
	common := func(c *cobra.Command) *cobra.Command {
		c.Flags().StringVar(&gatewayURL, "gateway-url", "", "the gateway's public base URL (default: services.gateway-<channel>.public_url)")
		output.register(c)
		return c
	}
	dl := func() (deadLetterCmd, error) {
		jsonOut, err := output.isJSON()
		return deadLetterCmd{g: g, gatewayURL: gatewayURL, json: jsonOut}, err
	}
	var only, queue string
	var limit int
	list := common(&cobra.Command{
		Use: "list [--channel line|slack] [--queue inbox|outbox] [--limit N]", Short: "list the dead letters with why each died",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := dl()
			if err != nil {
				return err
			}
			if only != "" && !isGatewayChannel(only) {
				return usage(txtDLChannel, strconv.Quote(only))
			}
			if queue != "" && queue != channel.QueueInbox && queue != channel.QueueOutbox {
				return usage(txtDLQueue, strconv.Quote(queue))
			}
			if limit < 1 || limit > 500 {
				return usage(txtDLLimit)
			}
			return d.list(cmd.Context(), only, queue, limit)
		},
	})
	list.Flags().StringVar(&only, "channel", "", "only this channel's gateway (line or slack)")
	list.Flags().StringVar(&queue, "queue", "", "only this queue (inbox: events; outbox: replies and pushes)")
	list.Flags().IntVar(&limit, "limit", 50, "at most this many per gateway")
	_ = list.RegisterFlagCompletionFunc("channel", fixedCompletions(gatewayChannels...))
	_ = list.RegisterFlagCompletionFunc("queue", fixedCompletions(channel.QueueInbox, channel.QueueOutbox))
	one := func(name, short string, do func(d deadLetterCmd, ctx context.Context, ch, id string) error) *cobra.Command {
		return common(&cobra.Command{
			Use: name + " <channel>:<queue>:<id>", Short: short,
			Args: exactArgs(1, txtArgsDeadLetter),
			RunE: func(cmd *cobra.Command, args []string) error {
				d, err := dl()
				if err != nil {
					return err
				}
				ch, id, err := splitDeadLetterID(args[0])
				if err != nil {
					return err
				}
				return do(d, cmd.Context(), ch, id)
			},
		})
	}
	cmd.AddCommand(list,
		one("show", "show a dead letter: its reason, attempts and payload", deadLetterCmd.show),
		one("replay", "put a dead letter back on its queue (idempotent)", deadLetterCmd.replay),
		one("drop", "delete a dead letter", deadLetterCmd.drop))
	return cmd
}

func isGatewayChannel(ch string) bool { return ch == "line" || ch == "slack" }

// splitDeadLetterID reads "<channel>:<queue>:<id>" into the channel and the gateway's own id.
func splitDeadLetterID(s string) (string, string, error) {
	ch, id, ok := strings.Cut(s, ":")
	if !ok || !isGatewayChannel(ch) || id == "" {
		return "", "", usage(txtDLID, strconv.Quote(s))
	}
	return ch, id, nil
}

type deadLetterCmd struct {
	g          *globals
	gatewayURL string
	json       bool
}

// base is the public URL of the gateway of ch.
func (d deadLetterCmd) base(ch string) string {
	if d.gatewayURL != "" {
		return d.gatewayURL
	}
	if ch == "slack" {
		return d.g.cfg.Services.GatewaySlack.PublicURL
	}
	return d.g.cfg.Services.GatewayLine.PublicURL
}

func (d deadLetterCmd) call(ctx context.Context, ch, method, path string, query url.Values, out any) error {
	return restAt(ctx, d.g, "gateway-"+ch, d.base(ch), method, path, query, nil, out)
}

func (d deadLetterCmd) list(ctx context.Context, only, queue string, limit int) error {
	channels := gatewayChannels
	if only != "" {
		channels = []string{only}
	}
	var all []channel.DeadLetterJSON
	var failed []error
	for _, ch := range channels {
		q := url.Values{"limit": {fmt.Sprint(limit)}}
		if queue != "" {
			q.Set("queue", queue)
		}
		var page channel.DeadLetterList
		if err := d.call(ctx, ch, http.MethodGet, channel.DeadLettersPath, q, &page); err != nil {
			var ae *apiError
			if only == "" && errors.As(err, &ae) && ae.code == ExitUnavailable {
				// A channel that is not deployed has no gateway to ask.
				fmt.Fprintf(d.g.io.Err, "%s: %s\n", msg(d.g.locale, "スキップ", "skipped"), sayError(err, d.g.locale))
				failed = append(failed, err)
				continue
			}
			return err
		}
		all = append(all, page.DeadLetters...)
	}
	if len(failed) == len(channels) {
		return errors.Join(failed...)
	}
	if d.json {
		return json.NewEncoder(d.g.io.Out).Encode(channel.DeadLetterList{DeadLetters: all})
	}
	if len(all) == 0 {
		fmt.Fprintln(d.g.io.Out, msg(d.g.locale, "デッドレターはありません。", "No dead letters."))
		return nil
	}
	rows := make([][]string, 0, len(all))
	for _, dl := range all {
		replayed := "-"
		if dl.Replayed != nil {
			replayed = dl.Replayed.At.Local().Format("01-02 15:04")
		}
		rows = append(rows, []string{dl.Channel + ":" + dl.ID, dl.DiedAt.Local().Format("01-02 15:04:05"), dl.Kind,
			fmt.Sprint(dl.Attempts), dl.Key, replayed, oneLine(dl.Reason, 60)})
	}
	return table(d.g.io.Out, header(d.g.locale, txtDeadLettersHeader), rows)
}

func (d deadLetterCmd) show(ctx context.Context, ch, id string) error {
	var dl channel.DeadLetterJSON
	if err := d.call(ctx, ch, http.MethodGet, channel.DeadLettersPath+"/"+url.PathEscape(id), nil, &dl); err != nil {
		return err
	}
	if d.json {
		return json.NewEncoder(d.g.io.Out).Encode(dl)
	}
	w := d.g.io.Out
	fmt.Fprintf(w, "%s:%s  %s\n", dl.Channel, dl.ID, dl.Kind)
	fmt.Fprintf(w, "%s: %s\n", msg(d.g.locale, "理由", "reason"), dl.Reason)
	fmt.Fprintf(w, "%s: %d\n", msg(d.g.locale, "試行回数", "attempts"), dl.Attempts)
	fmt.Fprintf(w, "%s: %s\n", msg(d.g.locale, "受信", "stored"), dl.StoredAt.Local().Format("2006-01-02 15:04:05"))
	fmt.Fprintf(w, "%s: %s\n", msg(d.g.locale, "断念", "died"), dl.DiedAt.Local().Format("2006-01-02 15:04:05"))
	fmt.Fprintf(w, "%s: %s\n", msg(d.g.locale, "イベント", "event"), dl.EventID)
	fmt.Fprintf(w, "%s: %s\n", msg(d.g.locale, "チャット", "chat"), dl.Key)
	if dl.Text != "" {
		fmt.Fprintf(w, "%s: %s\n", msg(d.g.locale, "テキスト", "text"), oneLine(dl.Text, 200))
	}
	if dl.Replayed != nil {
		fmt.Fprintf(w, "%s: %s (%s %s)\n", msg(d.g.locale, "再投入済み", "replayed"), dl.Replayed.At.Local().Format("2006-01-02 15:04:05"),
			msg(d.g.locale, "エントリ", "entry"), dl.Replayed.Entry)
	}
	fmt.Fprintf(w, "\n%s:\n%s\n", msg(d.g.locale, "ペイロード", "payload"), dl.Payload)
	return nil
}

func (d deadLetterCmd) replay(ctx context.Context, ch, id string) error {
	var r channel.ReplayJSON
	if err := d.call(ctx, ch, http.MethodPost, channel.DeadLettersPath+"/"+url.PathEscape(id)+"/replay", nil, &r); err != nil {
		return err
	}
	if d.json {
		return json.NewEncoder(d.g.io.Out).Encode(r)
	}
	if r.Already {
		fmt.Fprintf(d.g.io.Out, msg(d.g.locale, "%s:%s は %s に再投入済みです（entry %s）。何も追加していません。\n",
			"%s:%s was already replayed at %s (entry %s); nothing was enqueued.\n"), ch, id, r.At.Local().Format("2006-01-02 15:04:05"), r.Entry)
		return nil
	}
	fmt.Fprintf(d.g.io.Out, msg(d.g.locale, "%s:%s を再投入しました（entry %s）。\n", "%s:%s replayed (entry %s).\n"), ch, id, r.Entry)
	return nil
}

func (d deadLetterCmd) drop(ctx context.Context, ch, id string) error {
	if err := d.call(ctx, ch, http.MethodDelete, channel.DeadLettersPath+"/"+url.PathEscape(id), nil, nil); err != nil {
		return err
	}
	fmt.Fprintf(d.g.io.Out, msg(d.g.locale, "%s:%s を削除しました。\n", "%s:%s dropped.\n"), ch, id)
	return nil
}
