// Package logbuf batches log lines into fewer writes: a busy API logs a
// line per request, and one write(2) per line costs more than formatting
// it. Lines are written in order, whole, at most a flush interval late.
package logbuf

import (
	"io"
	"sync"
	"time"
)

// Writer buffers what is written to it and writes it to the underlying
// writer when the buffer holds size bytes, every interval, and on Flush
// and Close. It is safe for concurrent use. Write errors of the
// underlying writer are dropped (there is nowhere left to report them).
type Writer struct {
	mu   sync.Mutex
	w    io.Writer
	buf  []byte
	size int

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// New returns a Writer over w flushing every interval (a goroutine, until
// Close) or whenever size bytes are buffered.
func New(w io.Writer, size int, interval time.Duration) *Writer {
	b := &Writer{w: w, buf: make([]byte, 0, size), size: size, stop: make(chan struct{}), done: make(chan struct{})}
	go b.flushEvery(interval)
	return b
}

// Write buffers p (one log line: it is never split between two writes of
// the underlying writer), flushing first when it would not fit.
func (b *Writer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.buf)+len(p) > b.size {
		b.flushLocked()
	}
	if len(p) >= b.size {
		_, _ = b.w.Write(p)
		return len(p), nil
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// Flush writes what is buffered.
func (b *Writer) Flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
}

// Close stops the interval flushes and writes what is buffered. Writes
// after Close go straight to the underlying writer.
func (b *Writer) Close() {
	b.once.Do(func() {
		close(b.stop)
		<-b.done
		b.mu.Lock()
		defer b.mu.Unlock()
		b.flushLocked()
		b.size = 0
	})
}

func (b *Writer) flushLocked() {
	if len(b.buf) == 0 {
		return
	}
	_, _ = b.w.Write(b.buf)
	b.buf = b.buf[:0]
}

func (b *Writer) flushEvery(interval time.Duration) {
	defer close(b.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			b.Flush()
		}
	}
}
