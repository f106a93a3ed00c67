package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	heartbeatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/heartbeat/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/heartbeat/v1/heartbeatv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
)

func newStatusCmd(g *globals) *cobra.Command {
	var output outputFlag
	cmd := &cobra.Command{
		Use: "status", Short: "show the heartbeat report of every service and agent",
		Args: noArgs, Annotations: stateAnnotations(),
		RunE: func(cmd *cobra.Command, _ []string) error { return runStatus(cmd.Context(), g, output) },
	}
	output.register(cmd)
	return cmd
}

func runStatus(ctx context.Context, g *globals, output outputFlag) error {
	jsonOut, err := output.isJSON()
	if err != nil {
		return err
	}
	tel, err := telemetry.New(ctx, telemetry.Config{ServiceName: "picoclaw-cli", LogWriter: io.Discard})
	if err != nil {
		return err
	}
	opts, err := g.clientOptions(tel, 10*time.Second, svcauth.Heartbeat)
	if err != nil {
		return err
	}
	client := heartbeatv1connect.NewHeartbeatServiceClient(rpcserver.NewHTTPClient(), g.cfg.Services.Heartbeat.URL, opts...)
	res, err := client.Report(ctx, &heartbeatv1.ReportRequest{Locale: g.locale})
	if err != nil {
		return peerError("heartbeat", g.cfg.Services.Heartbeat.URL, err)
	}
	if jsonOut {
		return printJSON(g.io.Out, res)
	}
	fmt.Fprintln(g.io.Out, res.GetText())
	return nil
}
