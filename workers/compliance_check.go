package workers

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/aviary-dev/aviary/storage"
)

// errUnreadable marks an upload that can never be processed; the job fails.
var errUnreadable = errors.New("unreadable upload")

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
// JSON line per id that needs action to out, in upload order.
type checkRun struct {
	lookup    lookupFunc
	batchSize int
	progress  storage.ComplianceProgress
	onBatch   func(storage.ComplianceProgress)
	line      []byte // reusable output buffer
}

func (c *checkRun) run(ctx context.Context, in io.Reader, out io.Writer) error {
	br := bufio.NewReaderSize(in, 256<<10)
	if err := sniff(br); err != nil {
		return err
	}
	batch := make([]int64, 0, c.batchSize)
	for {
		line, err := readLine(br)
		if len(line) > 0 || err == nil {
			c.take(line, &batch)
		}
		if len(batch) == cap(batch) || (err != nil && len(batch) > 0) {
			if ferr := c.flush(ctx, batch, out); ferr != nil {
				return ferr
			}
			batch = batch[:0]
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read upload: %w", err)
		}
	}
}

// take classifies one line: blank lines are ignored, ids are batched,
// anything else is counted as malformed.
func (c *checkRun) take(line []byte, batch *[]int64) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	c.progress.LinesRead++
	id, ok := parseID(line)
	if !ok {
		c.progress.MalformedLines++
		return
	}
	*batch = append(*batch, id)
}

func (c *checkRun) flush(ctx context.Context, batch []int64, out io.Writer) error {
	found, err := c.lookup(ctx, batch)
	if err != nil {
		return err
	}
	for _, id := range batch {
		a, ok := found[id]
		if !ok {
			continue
		}
		c.line = appendResult(c.line[:0], id, a)
		if _, err := out.Write(c.line); err != nil {
			return fmt.Errorf("write result: %w", err)
		}
		c.progress.ResultLines++
	}
	if c.onBatch != nil {
		c.onBatch(c.progress)
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
	return nil
}

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
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	id, err := strconv.ParseInt(string(b), 10, 64)
	return id, err == nil && id > 0
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
