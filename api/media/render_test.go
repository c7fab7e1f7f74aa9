package media

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestSecondsUntil(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		until time.Duration
		want  int64
	}{
		{24 * time.Hour, 86400},
		{24*time.Hour - time.Millisecond, 86400}, // rounded up: a fresh session reads 86400
		{time.Second, 1},
		{time.Nanosecond, 1},
		{0, 0},
		{-time.Hour, 0},
	}
	for _, tt := range tests {
		if got := secondsUntil(now.Add(tt.until), now); got != tt.want {
			t.Errorf("secondsUntil(+%v) = %d, want %d", tt.until, got, tt.want)
		}
	}
}

func TestDescribeBytes(t *testing.T) {
	tests := map[int64]string{5 << 20: "5 MiB", 16 << 30: "16 GiB", 512 << 20: "512 MiB", 1000: "1000 bytes"}
	for n, want := range tests {
		if got := describeBytes(n); got != want {
			t.Errorf("describeBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestSegmentReader(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		limit int64
		err   error
	}{
		{"under the limit", "abc", 4, nil},
		{"at the limit", "abcd", 4, nil},
		{"over the limit", "abcde", 4, errSegmentTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &segmentReader{r: strings.NewReader(tt.body), limit: tt.limit}
			_, err := io.Copy(io.Discard, r)
			if !errors.Is(err, tt.err) || !errors.Is(r.err, tt.err) {
				t.Fatalf("copy: %v, kept %v; want %v", err, r.err, tt.err)
			}
			if tt.err == nil && r.n != int64(len(tt.body)) {
				t.Errorf("counted %d bytes, want %d", r.n, len(tt.body))
			}
		})
	}
}
