package compliance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzIDLines runs an uploaded ids file through checkRun, with a lookup
// that finds every id, and compares it with a reference reading of the
// same bytes (split on '\n', trimmed, a line longer than maxLineBytes
// malformed, an id 1 to 19 digits above 0 that fits an int64):
//   - an upload that is gzip, holds NUL or is not UTF-8 in its first 512
//     bytes is refused as errUnreadable, and only such uploads;
//   - otherwise the result holds one JSON line per valid id, in upload
//     order, and the counts of lines read and malformed lines agree.
//
// The batch size and parallelism come from the fuzzer too, so batch
// boundaries fall anywhere. Crashers it finds are kept in
// testdata/fuzz/FuzzIDLines.
func FuzzIDLines(f *testing.F) {
	for _, s := range []string{
		"1\n2\n3\n", "1334987486343299072\r\n", "\xef\xbb\xbf42\n", "  7  \n\n\n8", "0\n-1\n+1\n01\n",
		"9223372036854775807\n9223372036854775808\n99999999999999999999\n", "1 2\n", "١\n", "\x1f\x8b\x08", "1\x00",
		"\xff\n", string(bytes.Repeat([]byte("1"), maxLineBytes+1)) + "\n2\n", "1\t\v\f\n", "\n", "",
	} {
		f.Add([]byte(s), uint8(3), uint8(1))
	}
	f.Fuzz(func(t *testing.T, data []byte, batch, parallel uint8) {
		var got bytes.Buffer
		run := &checkRun{lookup: findAll, batchSize: int(batch%16) + 1, parallel: int(parallel % 4)}
		err := run.run(context.Background(), bytes.NewReader(data), &got)
		wantIDs, lines, malformed, unreadable := referenceIDs(data)
		if unreadable {
			if !errors.Is(err, errUnreadable) {
				t.Fatalf("%q: run = %v, want errUnreadable", data, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q: run = %v", data, err)
		}
		var gotIDs []int64
		sc := bufio.NewScanner(&got)
		for sc.Scan() {
			var line struct{ ID string }
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				t.Fatalf("%q: result line %q: %v", data, sc.Bytes(), err)
			}
			id, _ := strconv.ParseInt(line.ID, 10, 64)
			gotIDs = append(gotIDs, id)
		}
		if !equalIDs(gotIDs, wantIDs) {
			t.Fatalf("%q: result ids %v, want %v", data, gotIDs, wantIDs)
		}
		if p := run.progress; p.LinesRead != lines || p.MalformedLines != malformed || p.ResultLines != int64(len(wantIDs)) {
			t.Fatalf("%q: progress %+v, want %d lines, %d malformed, %d results", data, p, lines, malformed, len(wantIDs))
		}
	})
}

// findAll is a lookup that finds every id.
func findAll(_ context.Context, ids []int64) (map[int64]action, error) {
	at := time.Date(2031, 1, 15, 0, 0, 0, 0, time.UTC)
	out := make(map[int64]action, len(ids))
	for _, id := range ids {
		out[id] = action{CreatedAt: at, RedactedAt: at, Reason: "deleted"}
	}
	return out, nil
}

// referenceIDs reads data the way the compliance job's rules say.
func referenceIDs(data []byte) (ids []int64, lines, malformed int64, unreadable bool) {
	head := data[:min(len(data), 512)]
	for i := 0; i < utf8.UTFMax && len(head) > 0; i++ { // a rune cut by the 512-byte window
		if r, _ := utf8.DecodeLastRune(head); r != utf8.RuneError {
			break
		}
		head = head[:len(head)-1]
	}
	if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) || bytes.IndexByte(data[:min(len(data), 512)], 0) >= 0 || !utf8.Valid(head) {
		return nil, 0, 0, true
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line = data[:i+1]
		}
		data = data[len(line):]
		if len(line) > maxLineBytes {
			lines++
			malformed++
			continue
		}
		s := string(bytes.TrimSpace(bytes.TrimSuffix(line, []byte{'\n'})))
		if s == "" {
			continue
		}
		lines++
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id <= 0 || len(s) > 19 || s[0] == '+' || s[0] == '-' {
			malformed++
			continue
		}
		ids = append(ids, id)
	}
	return ids, lines, malformed, false
}

func equalIDs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
