package cli

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// imageJSON is one record of approval's image audit log (GET /v1/images).
type imageJSON struct {
	ID         int64     `json:"id"`
	JobID      string    `json:"job_id"`
	SessionID  string    `json:"session_id"`
	SHA256     string    `json:"sha256"`
	SizeBytes  int64     `json:"size_bytes"`
	MIMEType   string    `json:"mime_type"`
	Provider   string    `json:"provider"`
	Model      string    `json:"model"`
	RecordedAt time.Time `json:"recorded_at"`
	Kept       bool      `json:"kept"`
}

type imagesOptions struct {
	job    string
	since  string
	limit  int
	output outputFlag
}

func newImagesCmd(g *globals) *cobra.Command {
	var o imagesOptions
	cmd := &cobra.Command{
		Use:   "images [--job <job_id>] [--since 24h|<RFC 3339 time>]",
		Short: "list the image audit log: every image sent to a model, newest first",
		Long: "Lists approval's image audit log: for every image sent to a model, the job it belongs to, its SHA-256,\n" +
			"size and type, the provider and model it went to, when, and whether its bytes were kept (images.keep).",
		Args: noArgs, Annotations: stateAnnotations(),
		RunE: func(cmd *cobra.Command, _ []string) error { return runImages(cmd.Context(), g, o) },
	}
	cmd.Flags().StringVar(&o.job, "job", "", "only this job's images")
	cmd.Flags().StringVar(&o.since, "since", "", "only images sent since this time (RFC 3339) or this long ago (24h)")
	cmd.Flags().IntVar(&o.limit, "limit", 50, "at most this many records (1..500)")
	o.output.register(cmd)
	return cmd
}

func runImages(ctx context.Context, g *globals, o imagesOptions) error {
	jsonOut, err := o.output.isJSON()
	if err != nil {
		return err
	}
	q := url.Values{"limit": {fmt.Sprint(o.limit)}}
	if o.job != "" {
		q.Set("job", strings.TrimSpace(o.job))
	}
	if o.since != "" {
		q.Set("since", strings.TrimSpace(o.since))
	}
	var out struct {
		Images []imageJSON `json:"images"`
	}
	return listREST(ctx, g, "/v1/images", q, &out, jsonOut, txtImagesHeader, func() (rows [][]string) {
		for _, x := range out.Images {
			kept := say(g.locale, txtNo)
			if x.Kept {
				kept = say(g.locale, txtYes)
			}
			rows = append(rows, []string{x.JobID, x.RecordedAt.Local().Format("01-02 15:04:05"), x.Provider + "/" + x.Model,
				x.MIMEType, fmt.Sprint(x.SizeBytes), x.SHA256[:min(12, len(x.SHA256))], kept})
		}
		return rows
	})
}
