package api

import (
	"context"
	"log/slog"
)

type logAttrsKey struct{}

// withLogAttrs adds attributes that LogHandler attaches to every record
// logged with this context (the request id, for example).
func withLogAttrs(ctx context.Context, attrs ...slog.Attr) context.Context {
	prev, _ := ctx.Value(logAttrsKey{}).([]slog.Attr)
	all := append(append([]slog.Attr(nil), prev...), attrs...)
	return context.WithValue(ctx, logAttrsKey{}, all)
}

// LogHandler wraps a slog.Handler so records logged with a request context
// carry that request's attributes (request_id).
type LogHandler struct{ slog.Handler }

// Handle implements slog.Handler.
func (h LogHandler) Handle(ctx context.Context, r slog.Record) error {
	if attrs, ok := ctx.Value(logAttrsKey{}).([]slog.Attr); ok {
		r.AddAttrs(attrs...)
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h LogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return LogHandler{h.Handler.WithAttrs(attrs)}
}

// WithGroup implements slog.Handler.
func (h LogHandler) WithGroup(name string) slog.Handler { return LogHandler{h.Handler.WithGroup(name)} }
