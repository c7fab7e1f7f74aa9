// Package logctx carries request- or task-scoped slog attributes in a
// context, so every record logged with that context names its request id or
// task. The API tier, the workers and cmd share it; it imports only the
// standard library.
package logctx

import (
	"context"
	"log/slog"
)

type attrsKey struct{}

// With returns a copy of ctx whose log records (through Handler) also carry
// attrs, after any attributes ctx already carried.
func With(ctx context.Context, attrs ...slog.Attr) context.Context {
	prev, _ := ctx.Value(attrsKey{}).([]slog.Attr)
	all := append(append([]slog.Attr(nil), prev...), attrs...)
	return context.WithValue(ctx, attrsKey{}, all)
}

// Attrs returns the attributes With stored in ctx.
func Attrs(ctx context.Context) []slog.Attr {
	attrs, _ := ctx.Value(attrsKey{}).([]slog.Attr)
	return attrs
}

// Handler wraps a slog.Handler so records logged with a context carry that
// context's attributes (request_id, task_id).
type Handler struct{ slog.Handler }

// Handle implements slog.Handler.
func (h Handler) Handle(ctx context.Context, r slog.Record) error {
	if attrs := Attrs(ctx); len(attrs) > 0 {
		r.AddAttrs(attrs...)
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return Handler{h.Handler.WithAttrs(attrs)}
}

// WithGroup implements slog.Handler.
func (h Handler) WithGroup(name string) slog.Handler { return Handler{h.Handler.WithGroup(name)} }
