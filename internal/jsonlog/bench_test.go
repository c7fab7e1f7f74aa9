package jsonlog

import (
	"context"
	"io"
	"log/slog"
	"testing"
)

// accessLineHandlers are the handlers the benchmarks compare.
func accessLineHandlers() []struct {
	name string
	h    slog.Handler
} {
	return []struct {
		name string
		h    slog.Handler
	}{
		{"jsonlog", New(io.Discard, nil)},
		{"slog", slog.NewJSONHandler(io.Discard, nil)},
	}
}

// BenchmarkAccessLine compares this package's handler with
// slog.JSONHandler on the line the API server logs per HTTP request.
func BenchmarkAccessLine(b *testing.B) {
	for _, bc := range accessLineHandlers() {
		b.Run(bc.name, func(b *testing.B) {
			r := accessRecord()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := bc.h.Handle(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAccessLineParallel is BenchmarkAccessLine from every P at once.
func BenchmarkAccessLineParallel(b *testing.B) {
	for _, bc := range accessLineHandlers() {
		b.Run(bc.name, func(b *testing.B) {
			r := accessRecord()
			ctx := context.Background()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := bc.h.Handle(ctx, r); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
