package main

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// setupTracing installs W3C trace-context propagation always, and an OTLP
// span exporter only when the standard OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set; the exporter reads the other
// standard OTEL_* variables itself. Without an endpoint nothing is
// exported, but an incoming traceparent still reaches the upstreams.
func setupTracing(ctx context.Context, env lookupEnv) (tracer trace.Tracer, shutdown func(context.Context) error, err error) {
	// Trace context only: W3C baggage is caller-chosen data, and nothing
	// the caller sends besides the trace position reaches an upstream.
	otel.SetTextMapPropagator(propagation.TraceContext{})
	if env.get("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return nil, func(context.Context) error { return nil }, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, nil, err
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "mcp-gateway")),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
	)
	if err != nil {
		return nil, nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	return tp.Tracer("github.com/mcpgw/gateway"), tp.Shutdown, nil
}

// traced continues the caller's trace when it sent a traceparent header:
// the core's spans (one per tool call, one per upstream exchange) become
// its children. Without the header, the MCP layer looks in params._meta.
func traced(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("traceparent") == "" {
			next.ServeHTTP(w, r)
			return
		}
		ctx := otel.GetTextMapPropagator().Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
