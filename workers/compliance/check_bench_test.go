package compliance

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"testing"
	"time"
)

// BenchmarkCheckRun measures the worker's own cost per id (reading, parsing,
// batching, formatting) with an in-memory lookup in which every seventh id
// needs action; the database is left out on purpose.
func BenchmarkCheckRun(b *testing.B) {
	const lines = 1_000_000
	var upload bytes.Buffer
	var wantResults int64
	for i := 1; i <= lines; i++ {
		id := 1_000_000_000 + i
		upload.WriteString(strconv.Itoa(id))
		upload.WriteByte('\n')
		if id%7 == 0 {
			wantResults++
		}
	}
	created := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	lookup := func(_ context.Context, ids []int64) (map[int64]action, error) {
		out := make(map[int64]action, len(ids)/7+1)
		for _, id := range ids {
			if id%7 == 0 {
				out[id] = action{CreatedAt: created, RedactedAt: created.Add(time.Hour), Reason: "deleted"}
			}
		}
		return out, nil
	}
	b.SetBytes(int64(upload.Len()))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run := &checkRun{lookup: lookup, batchSize: 5000}
		if err := run.run(context.Background(), bytes.NewReader(upload.Bytes()), io.Discard); err != nil {
			b.Fatal(err)
		}
		if run.progress.LinesRead != lines || run.progress.ResultLines != wantResults {
			b.Fatalf("progress %+v", run.progress)
		}
	}
	b.ReportMetric(float64(b.N*lines)/b.Elapsed().Seconds(), "ids/s")
}
