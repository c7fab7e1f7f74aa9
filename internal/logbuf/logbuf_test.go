package logbuf

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder records each write it gets.
type recorder struct {
	mu     sync.Mutex
	writes []string
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, string(p))
	return len(p), nil
}

func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.writes...)
}

func TestWriter(t *testing.T) {
	tests := []struct {
		name  string
		size  int
		lines []string
		// writes are what the underlying writer gets before Close, then
		// after it.
		before, after []string
	}{
		{name: "lines batched until Close", size: 64, lines: []string{"a\n", "b\n", "c\n"}, after: []string{"a\nb\nc\n"}},
		{name: "a line that would not fit flushes first", size: 8, lines: []string{"aaa\n", "bbb\n", "cc\n"},
			before: []string{"aaa\nbbb\n"}, after: []string{"cc\n"}},
		{name: "a line as large as the buffer goes straight through", size: 4, lines: []string{"a\n", "bbbb\n", "c\n"},
			before: []string{"a\n", "bbbb\n"}, after: []string{"c\n"}},
		{name: "nothing written, nothing flushed", size: 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{}
			w := New(r, tt.size, time.Hour)
			for _, l := range tt.lines {
				if n, err := w.Write([]byte(l)); n != len(l) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", l, n, err)
				}
			}
			if got := r.all(); fmt.Sprint(got) != fmt.Sprint(tt.before) {
				t.Errorf("before Close: writes %q, want %q", got, tt.before)
			}
			w.Close()
			if got := r.all(); fmt.Sprint(got) != fmt.Sprint(append(tt.before, tt.after...)) {
				t.Errorf("after Close: writes %q, want %q", got, append(tt.before, tt.after...))
			}
		})
	}
}

// TestWriterInterval: lines reach the underlying writer without Close,
// by the interval flush.
func TestWriterInterval(t *testing.T) {
	r := &recorder{}
	w := New(r, 1<<10, 5*time.Millisecond)
	defer w.Close()
	w.Write([]byte("line\n"))
	deadline := time.Now().Add(5 * time.Second)
	for len(r.all()) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := r.all(); fmt.Sprint(got) != fmt.Sprint([]string{"line\n"}) {
		t.Fatalf("writes %q, want the line flushed by the interval", got)
	}
}

// TestWriterConcurrent: lines written from many goroutines all arrive,
// each whole.
func TestWriterConcurrent(t *testing.T) {
	var out bytes.Buffer
	var mu sync.Mutex
	w := New(writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return out.Write(p) }), 256, time.Millisecond)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				fmt.Fprintf(w, "goroutine %d line %d\n", g, i)
			}
		})
	}
	wg.Wait()
	w.Close()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	seen := map[string]bool{}
	for _, l := range lines {
		seen[l] = true
	}
	if len(lines) != 4000 || len(seen) != 4000 {
		t.Fatalf("%d lines (%d distinct), want 4000", len(lines), len(seen))
	}
	for g := range 8 {
		for i := range 500 {
			if l := fmt.Sprintf("goroutine %d line %d", g, i); !seen[l] {
				t.Fatalf("missing %q", l)
			}
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
