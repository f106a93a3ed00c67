package telemetry

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// newOTLPExporter is the OTLP trace exporter of the OpenTelemetry SDK over our own OTLP/HTTP
// client (protobuf, POST <endpoint>/v1/traces). The SDK's own OTLP clients link a gRPC stack
// (the HTTP one through the collector package's gateway stubs), which alone is a quarter of a
// binary; this client needs only protobuf and net/http.
func newOTLPExporter(ctx context.Context, endpoint string) (*otlptrace.Exporter, error) {
	u, err := otlpTracesURL(endpoint)
	if err != nil {
		return nil, err
	}
	return otlptrace.New(ctx, &otlpHTTP{url: u, hc: &http.Client{Timeout: 10 * time.Second}})
}

// otlpTracesURL is the traces URL for OTEL_EXPORTER_OTLP_ENDPOINT: "http(s)://host:port[/base]"
// (the signal path /v1/traces is appended, as the OTLP exporter specification says) or a bare
// "host:port" (plain HTTP).
func otlpTracesURL(endpoint string) (string, error) {
	endpoint = strings.TrimSpace(endpoint)
	if !strings.Contains(endpoint, "://") {
		endpoint = "http://" + endpoint
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("telemetry: OTLP endpoint %q is not http(s)://host:port", endpoint)
	}
	u.Path = strings.TrimRight(u.Path, "/") + "/v1/traces"
	return u.String(), nil
}

// redactedURL is u with any password replaced, for error messages.
func redactedURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return "the OTLP endpoint"
}

// otlpHTTP is an otlptrace.Client for OTLP/HTTP with protobuf bodies.
type otlpHTTP struct {
	url string
	hc  *http.Client
}

func (c *otlpHTTP) Start(context.Context) error { return nil }

func (c *otlpHTTP) Stop(context.Context) error {
	c.hc.CloseIdleConnections()
	return nil
}

// UploadTraces posts one ExportTraceServiceRequest: its only field, resource_spans (1), is a
// repeated message, so the request is each ResourceSpans as a length-delimited field 1.
func (c *otlpHTTP) UploadTraces(ctx context.Context, spans []*tracepb.ResourceSpans) error {
	var body []byte
	for _, rs := range spans {
		b, err := proto.Marshal(rs)
		if err != nil {
			return fmt.Errorf("otlp: encode spans: %w", err)
		}
		body = protowire.AppendTag(body, 1, protowire.BytesType)
		body = protowire.AppendBytes(body, b)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	res, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("otlp: export: %w", err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return fmt.Errorf("otlp: export to %s: %s", redactedURL(c.url), res.Status)
	}
	return nil
}
