package telemetry

import (
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
)

// otlpOptions accepts "host:port" or "http(s)://host:port" as OTEL_EXPORTER_OTLP_ENDPOINT does.
func otlpOptions(endpoint string) []otlptracegrpc.Option {
	if u, err := url.Parse(endpoint); err == nil && u.Host != "" && strings.HasPrefix(u.Scheme, "http") {
		opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpoint(u.Host)}
		if u.Scheme == "http" {
			opts = append(opts, otlptracegrpc.WithInsecure())
		}
		return opts
	}
	return []otlptracegrpc.Option{otlptracegrpc.WithEndpoint(endpoint), otlptracegrpc.WithInsecure()}
}
