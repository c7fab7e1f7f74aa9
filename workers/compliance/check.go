package compliance

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/aviary-dev/aviary/storage"
)

// errUnreadable marks an upload that can never be processed; the job fails.
var errUnreadable = errors.New("unreadable upload")

// noIDs is the errUnreadable of an upload without a single valid id: there
// is nothing to check, so the job fails rather than completing empty.
func noIDs(p storage.ComplianceProgress) error {
	if p.LinesRead == 0 {
		return fmt.Errorf("%w: the file contains no ids; upload plain text with one id per line", errUnreadable)
	}
	return fmt.Errorf("%w: none of its %d lines is a valid id; upload plain text with one numeric id per line", errUnreadable, p.LinesRead)
}

// maxLineBytes is the longest line read as a candidate id; longer lines are
// malformed and skipped without being buffered.
const maxLineBytes = 4096

// action is one result line: an id that needs action and why.
type action struct {
	CreatedAt  time.Time
	RedactedAt time.Time
	Reason     string
}

// lookupFunc resolves a batch of ids to the actions they need; ids that need
// none are absent from the map.
type lookupFunc func(ctx context.Context, ids []int64) (map[int64]action, error)

// checkRun streams ids from in, resolves them in batches and writes one
// JSON line per id that needs action to out, in upload order. Up to
// parallel lookups run at once (default 2) while results are still written
// in input order, so reading, querying and writing overlap; memory stays
// bounded by (parallel+1) batches whatever the upload's size.
type checkRun struct {
	lookup    lookupFunc
	batchSize int
	parallel  int
	progress  storage.ComplianceProgress
	onBatch   func(storage.ComplianceProgress)
	line      []byte // reusable output buffer
}

// pendingBatch is one batch whose lookup may still be running, with the
// reader's counters as they were when the batch was cut.
type pendingBatch struct {
	ids    []int64
	counts storage.ComplianceProgress
	found  map[int64]action
	err    error
	done   chan struct{}
}

func (c *checkRun) run(ctx context.Context, in io.Reader, out io.Writer) error {
	br := bufio.NewReaderSize(in, 256<<10)
	if err := sniff(br); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	parallel := max(c.parallel, 1)
	if c.parallel == 0 {
		parallel = 2
	}
	batches := make(chan *pendingBatch, parallel-1)
	slots := make(chan struct{}, parallel) // one per lookup running
	readErr := make(chan error, 1)
	go func() {
		defer close(batches)
		readErr <- c.read(ctx, br, batches, slots)
	}()
	if err := c.drain(batches, out); err != nil {
		cancel()
		for range batches { // let the reader stop
		}
		<-readErr
		return err
	}
	return <-readErr
}

// read cuts the upload into batches and starts each batch's lookup once one
// of the slots is free, so at most cap(slots) lookups run at once.
func (c *checkRun) read(ctx context.Context, br *bufio.Reader, batches chan<- *pendingBatch, slots chan struct{}) error {
	var counts storage.ComplianceProgress
	batch := make([]int64, 0, c.batchSize)
	for {
		line, err := readLine(br)
		if len(line) > 0 || err == nil {
			batch = take(line, batch, &counts)
		}
		if len(batch) == cap(batch) || (err != nil && len(batch) > 0) {
			p := &pendingBatch{ids: batch, counts: counts, done: make(chan struct{})}
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return ctx.Err()
			}
			go func() {
				p.found, p.err = c.lookup(ctx, p.ids)
				<-slots
				close(p.done)
			}()
			select {
			case batches <- p:
			case <-ctx.Done():
				return ctx.Err()
			}
			batch = make([]int64, 0, c.batchSize)
		}
		if errors.Is(err, io.EOF) {
			batches <- &pendingBatch{counts: counts, done: closedChan}
			return nil
		}
		if err != nil {
			return fmt.Errorf("read upload: %w", err)
		}
	}
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// take classifies one line: blank lines are ignored, ids are batched,
// anything else is counted as malformed.
func take(line []byte, batch []int64, counts *storage.ComplianceProgress) []int64 {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return batch
	}
	counts.LinesRead++
	id, ok := parseID(line)
	if !ok {
		counts.MalformedLines++
		return batch
	}
	return append(batch, id)
}

// drain writes each batch's results in order as its lookup finishes.
func (c *checkRun) drain(batches <-chan *pendingBatch, out io.Writer) error {
	for p := range batches {
		<-p.done
		if p.err != nil {
			return p.err
		}
		for _, id := range p.ids {
			a, ok := p.found[id]
			if !ok {
				continue
			}
			c.line = appendResult(c.line[:0], id, a)
			if _, err := out.Write(c.line); err != nil {
				return fmt.Errorf("write result: %w", err)
			}
			c.progress.ResultLines++
		}
		c.progress.LinesRead, c.progress.MalformedLines = p.counts.LinesRead, p.counts.MalformedLines
		if c.onBatch != nil {
			c.onBatch(c.progress)
		}
	}
	return nil
}

// sniff rejects uploads that are clearly not text: compressed or binary.
func sniff(br *bufio.Reader) error {
	head, err := br.Peek(512)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return fmt.Errorf("read upload: %w", err)
	}
	if bytes.HasPrefix(head, []byte{0x1f, 0x8b}) {
		return fmt.Errorf("%w: the file is gzip-compressed; upload plain text with one id per line", errUnreadable)
	}
	if bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(trimPartialRune(head)) {
		return fmt.Errorf("%w: the file is not text; upload plain text with one id per line", errUnreadable)
	}
	if bytes.HasPrefix(head, utf8BOM) { // editors on Windows often write one
		_, _ = br.Discard(len(utf8BOM))
	}
	return nil
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

func trimPartialRune(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		if r, _ := utf8.DecodeLastRune(b); r != utf8.RuneError {
			break
		}
		b = b[:len(b)-1]
	}
	return b
}

// readLine returns the next line without its newline. A line longer than
// maxLineBytes is returned as a single marker byte so it counts as malformed.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) && len(line) <= maxLineBytes {
		return bytes.TrimSuffix(line, []byte{'\n'}), err
	}
	for errors.Is(err, bufio.ErrBufferFull) {
		_, err = br.ReadSlice('\n')
	}
	return []byte{'x'}, err
}

// parseID parses a decimal core id (1 to 19 digits, positive, fits int64).
func parseID(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var n uint64 // 19 digits never overflow a uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return int64(n), n > 0 && n <= math.MaxInt64
}

const resultTime = "2006-01-02T15:04:05.000Z"

// appendResult renders one result line (JSON object + newline).
func appendResult(b []byte, id int64, a action) []byte {
	b = append(b, `{"id":"`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `","action":"delete","created_at":"`...)
	b = a.CreatedAt.UTC().AppendFormat(b, resultTime)
	b = append(b, `","redacted_at":"`...)
	b = a.RedactedAt.UTC().AppendFormat(b, resultTime)
	b = append(b, `","reason":"`...)
	b = append(b, a.Reason...)
	return append(b, "\"}\n"...)
}

// userAction decides whether a user record needs action, and why. The most
// final state wins: deleted, suspended, deactivated, protected.
func userAction(u storage.User) (reason string, at time.Time, ok bool) {
	switch {
	case u.DeletedAt != nil:
		return "deleted", *u.DeletedAt, true
	case u.SuspendedAt != nil:
		return "suspended", *u.SuspendedAt, true
	case u.DeactivatedAt != nil:
		return "deactivated", *u.DeactivatedAt, true
	case u.ProtectedAt != nil:
		return "protected", *u.ProtectedAt, true
	}
	return "", time.Time{}, false
}

// postAction decides whether a post needs action: deleted itself, or its
// author's state hides it.
func postAction(p storage.PostStatus) (reason string, at time.Time, ok bool) {
	if p.DeletedAt != nil {
		return "deleted", *p.DeletedAt, true
	}
	return userAction(p.Author)
}
