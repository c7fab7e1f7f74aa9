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

// attrSet is what With stores: the attributes, in one allocation with
// their backing array when they are few (a request id: one per request).
type attrSet struct {
	attrs  []slog.Attr
	inline [2]slog.Attr
}

// With returns a copy of ctx whose log records (through Handler) also carry
// attrs, after any attributes ctx already carried.
func With(ctx context.Context, attrs ...slog.Attr) context.Context {
	prev := Attrs(ctx)
	set := &attrSet{}
	all := set.inline[:0]
	if n := len(prev) + len(attrs); n > len(set.inline) {
		all = make([]slog.Attr, 0, n)
	}
	set.attrs = append(append(all, prev...), attrs...)
	return context.WithValue(ctx, attrsKey{}, set)
}

// Attrs returns the attributes With stored in ctx.
func Attrs(ctx context.Context) []slog.Attr {
	if set, ok := ctx.Value(attrsKey{}).(*attrSet); ok {
		return set.attrs
	}
	return nil
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

// OrDefault returns l, or slog.Default() when l is nil: the logger of a
// component whose Logger field was left unset.
func OrDefault(l *slog.Logger) *slog.Logger {
	if l != nil {
		return l
	}
	return slog.Default()
}
