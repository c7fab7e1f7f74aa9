package compliance

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

// fakeLookup resolves ids from a fixed table and records every batch. It is
// safe for the concurrent calls of a pipelined checkRun.
type fakeLookup struct {
	actions map[int64]action
	err     error // returned by every call when set

	mu      sync.Mutex
	batches [][]int64
}

func (f *fakeLookup) lookup(_ context.Context, ids []int64) (map[int64]action, error) {
	f.mu.Lock()
	f.batches = append(f.batches, slices.Clone(ids))
	f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	out := map[int64]action{}
	for _, id := range ids {
		if a, ok := f.actions[id]; ok {
			out[id] = a
		}
	}
	return out, nil
}

// sortedBatches returns the recorded batches in a canonical order: with
// parallel lookups the call order is not the input order.
func (f *fakeLookup) sortedBatches() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, len(f.batches))
	for i, b := range f.batches {
		out[i] = fmt.Sprint(b)
	}
	slices.Sort(out)
	return out
}

func batchStrings(batches [][]int64) []string {
	out := make([]string, len(batches))
	for i, b := range batches {
		out[i] = fmt.Sprint(b)
	}
	slices.Sort(out)
	return out
}

var (
	tCreated  = time.Date(2021, 11, 15, 19, 8, 5, 123456789, time.UTC)
	tRedacted = time.Date(2022, 1, 2, 3, 4, 5, 0, time.UTC)
)

// checkActions are the ids the fake platform wants deleted.
var checkActions = map[int64]action{
	1:                   {CreatedAt: tCreated, RedactedAt: tRedacted, Reason: "deleted"},
	3:                   {CreatedAt: tCreated, RedactedAt: tRedacted, Reason: "suspended"},
	5:                   {CreatedAt: tCreated, RedactedAt: tRedacted, Reason: "protected"},
	7:                   {CreatedAt: tCreated, RedactedAt: tRedacted, Reason: "deactivated"},
	9223372036854775807: {CreatedAt: tCreated, RedactedAt: tRedacted, Reason: "deleted"},
}

// resultLine is the expected output line for one id of checkActions.
func resultLine(id, reason string) string {
	return `{"id":"` + id + `","action":"delete","created_at":"2021-11-15T19:08:05.123Z",` +
		`"redacted_at":"2022-01-02T03:04:05.000Z","reason":"` + reason + `"}` + "\n"
}

func TestCheckRun(t *testing.T) {
	t.Parallel()
	longDigits := strings.Repeat("1", maxLineBytes+10) // fits the reader's buffer
	hugeDigits := strings.Repeat("3", 300<<10)         // longer than the reader's buffer
	tests := []struct {
		name      string
		in        string
		batchSize int
		want      string
		progress  storage.ComplianceProgress
		batches   [][]int64
	}{
		{
			name: "empty", in: "", batchSize: 10,
		},
		{
			name: "only blank lines", in: "\n\n   \n\t\r\n\r\n", batchSize: 10,
		},
		{
			name: "plain", in: "1\n2\n3\n", batchSize: 10,
			want:     resultLine("1", "deleted") + resultLine("3", "suspended"),
			progress: storage.ComplianceProgress{LinesRead: 3, ResultLines: 2},
			batches:  [][]int64{{1, 2, 3}},
		},
		{
			name: "UTF-8 byte-order mark", in: "\xEF\xBB\xBF1\r\n2\r\n", batchSize: 10,
			want:     resultLine("1", "deleted"),
			progress: storage.ComplianceProgress{LinesRead: 2, ResultLines: 1},
			batches:  [][]int64{{1, 2}},
		},
		{
			name: "CRLF", in: "1\r\n2\r\n5\r\n", batchSize: 10,
			want:     resultLine("1", "deleted") + resultLine("5", "protected"),
			progress: storage.ComplianceProgress{LinesRead: 3, ResultLines: 2},
			batches:  [][]int64{{1, 2, 5}},
		},
		{
			name: "surrounding spaces and blank lines", in: "\n  1  \n\n\t3\t\n \r\n 7\r\n\n", batchSize: 10,
			want:     resultLine("1", "deleted") + resultLine("3", "suspended") + resultLine("7", "deactivated"),
			progress: storage.ComplianceProgress{LinesRead: 3, ResultLines: 3},
			batches:  [][]int64{{1, 3, 7}},
		},
		{
			name: "no trailing newline", in: "2\n3", batchSize: 10,
			want:     resultLine("3", "suspended"),
			progress: storage.ComplianceProgress{LinesRead: 2, ResultLines: 1},
			batches:  [][]int64{{2, 3}},
		},
		{
			name: "no trailing newline, last line malformed", in: "1\nabc", batchSize: 10,
			want:     resultLine("1", "deleted"),
			progress: storage.ComplianceProgress{LinesRead: 2, MalformedLines: 1, ResultLines: 1},
			batches:  [][]int64{{1}},
		},
		{
			name: "malformed ids",
			in: strings.Join([]string{
				"abc", "12a", "-5", "+5", "0", "00", "1 2", "1.0", "0x1F", "１", // full-width digit
				"12345678901234567890", // 20 digits
				"00000000000000000007", // 20 digits, small value
				"9223372036854775808",  // int64 overflow with 19 digits
				"99999999999999999999", // overflow with 20 digits
				"9223372036854775807",  // the largest id: valid
				"",
			}, "\n"),
			batchSize: 10,
			want:      resultLine("9223372036854775807", "deleted"),
			progress:  storage.ComplianceProgress{LinesRead: 15, MalformedLines: 14, ResultLines: 1},
			batches:   [][]int64{{9223372036854775807}},
		},
		{
			name: "only malformed lines", in: "x\ny\n", batchSize: 10,
			progress: storage.ComplianceProgress{LinesRead: 2, MalformedLines: 2},
		},
		{
			name: "line longer than maxLineBytes", in: "1\n" + longDigits + "\n3\n", batchSize: 10,
			want:     resultLine("1", "deleted") + resultLine("3", "suspended"),
			progress: storage.ComplianceProgress{LinesRead: 3, MalformedLines: 1, ResultLines: 2},
			batches:  [][]int64{{1, 3}},
		},
		{
			name: "line longer than the read buffer", in: "1\n" + hugeDigits + "\n5\n", batchSize: 10,
			want:     resultLine("1", "deleted") + resultLine("5", "protected"),
			progress: storage.ComplianceProgress{LinesRead: 3, MalformedLines: 1, ResultLines: 2},
			batches:  [][]int64{{1, 5}},
		},
		{
			name: "overlong last line without newline", in: "7\n" + hugeDigits, batchSize: 10,
			want:     resultLine("7", "deactivated"),
			progress: storage.ComplianceProgress{LinesRead: 2, MalformedLines: 1, ResultLines: 1},
			batches:  [][]int64{{7}},
		},
		{
			name: "line of exactly maxLineBytes with newline", in: strings.Repeat(" ", maxLineBytes-2) + "3\n", batchSize: 10,
			want:     resultLine("3", "suspended"),
			progress: storage.ComplianceProgress{LinesRead: 1, ResultLines: 1},
			batches:  [][]int64{{3}},
		},
		{
			name: "duplicates", in: "3\n3\n2\n3\n", batchSize: 2,
			want:     resultLine("3", "suspended") + resultLine("3", "suspended") + resultLine("3", "suspended"),
			progress: storage.ComplianceProgress{LinesRead: 4, ResultLines: 3},
			batches:  [][]int64{{3, 3}, {2, 3}},
		},
		{
			name: "batches keep input order", in: "7\n5\n3\n2\n1\n", batchSize: 2,
			want: resultLine("7", "deactivated") + resultLine("5", "protected") + resultLine("3", "suspended") +
				resultLine("1", "deleted"),
			progress: storage.ComplianceProgress{LinesRead: 5, ResultLines: 4},
			batches:  [][]int64{{7, 5}, {3, 2}, {1}},
		},
		{
			name: "exact batch multiple", in: "7\n5\n3\n2\n", batchSize: 2,
			want:     resultLine("7", "deactivated") + resultLine("5", "protected") + resultLine("3", "suspended"),
			progress: storage.ComplianceProgress{LinesRead: 4, ResultLines: 3},
			batches:  [][]int64{{7, 5}, {3, 2}},
		},
		{
			name: "malformed and blank lines do not fill batches", in: "1\nx\n\n2\ny\n3\n", batchSize: 2,
			want:     resultLine("1", "deleted") + resultLine("3", "suspended"),
			progress: storage.ComplianceProgress{LinesRead: 5, MalformedLines: 2, ResultLines: 2},
			batches:  [][]int64{{1, 2}, {3}},
		},
		{
			name: "batch size one", in: "5\n4\n", batchSize: 1,
			want:     resultLine("5", "protected"),
			progress: storage.ComplianceProgress{LinesRead: 2, ResultLines: 1},
			batches:  [][]int64{{5}, {4}},
		},
	}
	for _, tt := range tests {
		for _, parallel := range []int{1, 0, 3} { // 0 is the default (2)
			t.Run(fmt.Sprintf("%s/parallel=%d", tt.name, parallel), func(t *testing.T) {
				f := &fakeLookup{actions: checkActions}
				var reported []storage.ComplianceProgress
				run := &checkRun{lookup: f.lookup, batchSize: tt.batchSize, parallel: parallel,
					onBatch: func(p storage.ComplianceProgress) { reported = append(reported, p) }}
				var out bytes.Buffer
				if err := run.run(t.Context(), strings.NewReader(tt.in), &out); err != nil {
					t.Fatalf("run: %v", err)
				}
				if got := out.String(); got != tt.want {
					t.Errorf("output:\n%s\nwant:\n%s", got, tt.want)
				}
				if run.progress != tt.progress {
					t.Errorf("progress = %+v, want %+v", run.progress, tt.progress)
				}
				if got, want := f.sortedBatches(), batchStrings(tt.batches); !slices.Equal(got, want) {
					t.Errorf("lookup batches = %v, want %v", got, want)
				}
				checkReports(t, reported, len(tt.batches), tt.progress)
			})
		}
	}
}

// checkReports checks the progress reports of a run: at least one per
// batch, never going backwards, the last one the final progress.
func checkReports(t *testing.T, reported []storage.ComplianceProgress, batches int, final storage.ComplianceProgress) {
	t.Helper()
	if len(reported) < batches {
		t.Errorf("onBatch called %d times for %d batches", len(reported), batches)
	}
	for i := 1; i < len(reported); i++ {
		a, b := reported[i-1], reported[i]
		if b.LinesRead < a.LinesRead || b.MalformedLines < a.MalformedLines || b.ResultLines < a.ResultLines {
			t.Errorf("progress went backwards: %+v then %+v", a, b)
		}
	}
	if len(reported) > 0 && reported[len(reported)-1] != final {
		t.Errorf("last reported progress = %+v, want the final %+v", reported[len(reported)-1], final)
	}
	if batches > 0 && len(reported) == 0 {
		t.Error("progress never reported")
	}
}

func gzipped(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestCheckRunRejectsUnreadable(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"gzip":                   gzipped(t, "1\n2\n3\n"),
		"gzip magic only":        "\x1f\x8b",
		"NUL byte":               "1\n2\x00\n3\n",
		"NUL late in the head":   strings.Repeat("1\n", 200) + "\x00",
		"invalid UTF-8":          "1\n\xff\xfe\n3\n",
		"UTF-16 little endian":   "\xff\xfe1\x002\x00\n\x00",
		"invalid UTF-8 mid head": strings.Repeat("12\n", 50) + "\xc3\x28" + strings.Repeat("12\n", 200),
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			f := &fakeLookup{actions: checkActions}
			run := &checkRun{lookup: f.lookup, batchSize: 10}
			var out bytes.Buffer
			err := run.run(t.Context(), strings.NewReader(in), &out)
			if !errors.Is(err, errUnreadable) {
				t.Fatalf("run error = %v, want errUnreadable", err)
			}
			if out.Len() != 0 || len(f.batches) != 0 || run.progress != (storage.ComplianceProgress{}) {
				t.Errorf("rejected upload was processed: output %q, batches %v, progress %+v", out.String(), f.batches, run.progress)
			}
		})
	}
}

func TestCheckRunAcceptsText(t *testing.T) {
	t.Parallel()
	// Text the sniffer must not mistake for binary: multi-byte UTF-8,
	// including a rune cut at the 512-byte peek boundary.
	tests := map[string]struct {
		in       string
		progress storage.ComplianceProgress
	}{
		"UTF-8 comment line": {"héllo wörld\n1\n", storage.ComplianceProgress{LinesRead: 2, MalformedLines: 1, ResultLines: 1}},
		"rune across the peek boundary": {strings.Repeat("a", 511) + "é\n1\n",
			storage.ComplianceProgress{LinesRead: 2, MalformedLines: 1, ResultLines: 1}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			f := &fakeLookup{actions: checkActions}
			run := &checkRun{lookup: f.lookup, batchSize: 10}
			var out bytes.Buffer
			if err := run.run(t.Context(), strings.NewReader(tt.in), &out); err != nil {
				t.Fatalf("run: %v", err)
			}
			if run.progress != tt.progress || out.String() != resultLine("1", "deleted") {
				t.Errorf("progress %+v output %q", run.progress, out.String())
			}
		})
	}
}

func TestCheckRunErrors(t *testing.T) {
	t.Parallel()
	errLookup := errors.New("database on fire")
	errRead := errors.New("connection reset")
	errWrite := errors.New("disk full")
	tests := []struct {
		name    string
		in      io.Reader
		lookup  error
		out     io.Writer
		wantErr error
	}{
		{"lookup fails", strings.NewReader("1\n2\n"), errLookup, io.Discard, errLookup},
		{"read fails in the first block", io.MultiReader(strings.NewReader("1\n"), iotest.ErrReader(errRead)), nil, io.Discard, errRead},
		{"read fails later", io.MultiReader(strings.NewReader(strings.Repeat("2\n", 300<<10)), iotest.ErrReader(errRead)), nil, io.Discard, errRead},
		{"write fails", strings.NewReader("1\n"), nil, failWriter{errWrite}, errWrite},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeLookup{actions: checkActions, err: tt.lookup}
			run := &checkRun{lookup: f.lookup, batchSize: 1000}
			err := run.run(t.Context(), tt.in, tt.out)
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("run error = %v, want %v", err, tt.wantErr)
			}
			if errors.Is(err, errUnreadable) {
				t.Errorf("transient error %v marked unreadable", err)
			}
		})
	}
}

type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

func TestAppendResult(t *testing.T) {
	t.Parallel()
	paris := time.FixedZone("CET", 3600)
	tests := []struct {
		name   string
		prefix string
		id     int64
		a      action
		want   string
	}{
		{
			name: "milliseconds truncated", id: 1460323737035677698,
			a:    action{CreatedAt: tCreated, RedactedAt: tRedacted, Reason: "deleted"},
			want: `{"id":"1460323737035677698","action":"delete","created_at":"2021-11-15T19:08:05.123Z","redacted_at":"2022-01-02T03:04:05.000Z","reason":"deleted"}` + "\n",
		},
		{
			name: "times converted to UTC", id: 42,
			a: action{CreatedAt: time.Date(2020, 1, 1, 0, 30, 0, 999999999, paris),
				RedactedAt: time.Date(2023, 6, 30, 23, 59, 59, 1000000, paris), Reason: "protected"},
			want: `{"id":"42","action":"delete","created_at":"2019-12-31T23:30:00.999Z","redacted_at":"2023-06-30T22:59:59.001Z","reason":"protected"}` + "\n",
		},
		{
			name: "appends to the buffer", prefix: "previous\n", id: 9223372036854775807,
			a:    action{CreatedAt: tRedacted, RedactedAt: tRedacted, Reason: "suspended"},
			want: "previous\n" + `{"id":"9223372036854775807","action":"delete","created_at":"2022-01-02T03:04:05.000Z","redacted_at":"2022-01-02T03:04:05.000Z","reason":"suspended"}` + "\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(appendResult([]byte(tt.prefix), tt.id, tt.a))
			if got != tt.want {
				t.Errorf("appendResult =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestUserAndPostAction(t *testing.T) {
	t.Parallel()
	tp, ts, td, tx := tCreated, tCreated.Add(time.Hour), tCreated.Add(2*time.Hour), tCreated.Add(3*time.Hour)
	user := func(protected, suspended, deactivated, deleted *time.Time) storage.User {
		return storage.User{ID: 1, CreatedAt: tCreated, ProtectedAt: protected, SuspendedAt: suspended,
			DeactivatedAt: deactivated, DeletedAt: deleted}
	}
	tests := []struct {
		name       string
		user       storage.User
		wantReason string
		wantAt     time.Time
	}{
		{"active", user(nil, nil, nil, nil), "", time.Time{}},
		{"protected", user(&tp, nil, nil, nil), "protected", tp},
		{"deactivated", user(nil, nil, &td, nil), "deactivated", td},
		{"suspended", user(nil, &ts, nil, nil), "suspended", ts},
		{"deleted", user(nil, nil, nil, &tx), "deleted", tx},
		{"deactivated beats protected", user(&tp, nil, &td, nil), "deactivated", td},
		{"suspended beats deactivated and protected", user(&tp, &ts, &td, nil), "suspended", ts},
		{"deleted beats everything", user(&tp, &ts, &td, &tx), "deleted", tx},
		{"deleted beats suspended", user(nil, &ts, nil, &tx), "deleted", tx},
	}
	for _, tt := range tests {
		t.Run("user "+tt.name, func(t *testing.T) {
			reason, at, ok := userAction(tt.user)
			if ok != (tt.wantReason != "") || reason != tt.wantReason || !at.Equal(tt.wantAt) {
				t.Errorf("userAction = %q, %v, %v; want %q, %v", reason, at, ok, tt.wantReason, tt.wantAt)
			}
		})
		// A live post takes its author's action.
		t.Run("live post by "+tt.name, func(t *testing.T) {
			reason, at, ok := postAction(storage.PostStatus{ID: 2, CreatedAt: tCreated, Author: tt.user})
			if ok != (tt.wantReason != "") || reason != tt.wantReason || !at.Equal(tt.wantAt) {
				t.Errorf("postAction = %q, %v, %v; want %q, %v", reason, at, ok, tt.wantReason, tt.wantAt)
			}
		})
		// A deleted post is "deleted" at its own deletion time, whatever its author's state.
		t.Run("deleted post by "+tt.name, func(t *testing.T) {
			postDeleted := tCreated.Add(-time.Hour)
			reason, at, ok := postAction(storage.PostStatus{ID: 2, CreatedAt: tCreated, DeletedAt: &postDeleted, Author: tt.user})
			if !ok || reason != "deleted" || !at.Equal(postDeleted) {
				t.Errorf("postAction = %q, %v, %v; want deleted at %v", reason, at, ok, postDeleted)
			}
		})
	}
}

// TestCheckRunOutOfOrderLookups makes the first batch's lookup finish only
// after the second one has: results must still come out in input order.
func TestCheckRunOutOfOrderLookups(t *testing.T) {
	t.Parallel()
	for _, parallel := range []int{2, 3} {
		t.Run(fmt.Sprintf("parallel=%d", parallel), func(t *testing.T) {
			f := &fakeLookup{actions: checkActions}
			secondDone := make(chan struct{})
			lookup := func(ctx context.Context, ids []int64) (map[int64]action, error) {
				switch ids[0] {
				case 1:
					select {
					case <-secondDone:
					case <-time.After(10 * time.Second):
						t.Error("the second lookup never ran while the first was pending")
					}
				case 3:
					defer close(secondDone)
				}
				return f.lookup(ctx, ids)
			}
			run := &checkRun{lookup: lookup, batchSize: 1, parallel: parallel}
			var out bytes.Buffer
			if err := run.run(t.Context(), strings.NewReader("1\n3\n5\n7\n"), &out); err != nil {
				t.Fatalf("run: %v", err)
			}
			want := resultLine("1", "deleted") + resultLine("3", "suspended") + resultLine("5", "protected") +
				resultLine("7", "deactivated")
			if out.String() != want {
				t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
			}
		})
	}
}

// TestCheckRunBoundsLookupsInFlight holds every lookup until the test
// releases them and checks that no more than parallel start meanwhile.
func TestCheckRunBoundsLookupsInFlight(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ parallel, want int }{{1, 1}, {0, 2}, {2, 2}, {3, 3}} {
		t.Run(fmt.Sprintf("parallel=%d", tt.parallel), func(t *testing.T) {
			const ids = 12
			started := make(chan int64, ids)
			release := make(chan struct{})
			lookup := func(ctx context.Context, batch []int64) (map[int64]action, error) {
				started <- batch[0]
				<-release
				return nil, nil
			}
			run := &checkRun{lookup: lookup, batchSize: 1, parallel: tt.parallel}
			in := strings.Repeat("2\n", ids)
			done := make(chan error, 1)
			go func() { done <- run.run(context.Background(), strings.NewReader(in), io.Discard) }()
			defer func() {
				close(release)
				if err := <-done; err != nil {
					t.Errorf("run: %v", err)
				}
				if run.progress.LinesRead != ids {
					t.Errorf("lines read = %d, want %d", run.progress.LinesRead, ids)
				}
			}()
			for i := range tt.want {
				select {
				case <-started:
				case <-time.After(10 * time.Second):
					t.Fatalf("only %d lookups started, want %d in flight", i, tt.want)
				}
			}
			// Give a wrongly unbounded pipeline time to start one more.
			select {
			case <-started:
				t.Errorf("more than %d lookups in flight at once", tt.want)
			case <-time.After(300 * time.Millisecond):
			}
		})
	}
}

// TestCheckRunStopsAfterLookupError checks that a failed lookup ends the
// run with its error (and does not hang) however far the reader got.
func TestCheckRunStopsAfterLookupError(t *testing.T) {
	t.Parallel()
	errLookup := errors.New("lookup failed")
	for _, failAt := range []int64{1, 2, 5, 40} {
		for _, parallel := range []int{1, 0, 4} {
			t.Run(fmt.Sprintf("fail at %d parallel=%d", failAt, parallel), func(t *testing.T) {
				f := &fakeLookup{actions: checkActions}
				lookup := func(ctx context.Context, ids []int64) (map[int64]action, error) {
					if slices.Contains(ids, failAt) {
						return nil, errLookup
					}
					return f.lookup(ctx, ids)
				}
				var in strings.Builder
				for i := range int64(50) {
					fmt.Fprintf(&in, "%d\n", i+1)
				}
				run := &checkRun{lookup: lookup, batchSize: 3, parallel: parallel}
				var out bytes.Buffer
				err := run.run(t.Context(), strings.NewReader(in.String()), &out)
				if !errors.Is(err, errLookup) {
					t.Fatalf("run error = %v, want %v", err, errLookup)
				}
				// Batches before the failing one were written, in order; none after.
				want := ""
				for _, id := range []int64{1, 3, 5, 7} {
					if (id-1)/3 < (failAt-1)/3 {
						want += resultLine(fmt.Sprint(id), checkActions[id].Reason)
					}
				}
				if out.String() != want {
					t.Errorf("output before the failure:\n%s\nwant:\n%s", out.String(), want)
				}
			})
		}
	}
}
