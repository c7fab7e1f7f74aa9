package main

import (
	"maps"
	"strings"
	"testing"
)

// TestWorkerQueues: AVIARY_WORKER_QUEUES takes any subset of the queues,
// e.g. a media-only worker, and rejects unknown names and bad weights.
func TestWorkerQueues(t *testing.T) {
	tests := []struct {
		in      string
		want    map[string]int
		wantErr string
	}{
		{in: "media=1", want: map[string]int{"media": 1}},
		{in: "media", want: map[string]int{"media": 1}},
		{in: " media = 4 ", want: map[string]int{"media": 4}},
		{in: "compliance=3,default=2,media=1", want: map[string]int{"compliance": 3, "default": 2, "media": 1}},
		{in: defaultQueues(), want: map[string]int{"audiences": 2, "catalogs": 1, "compliance": 3, "default": 2, "insights": 1, "media": 1, "webhooks": 1}},
		{in: "media=1,,", want: map[string]int{"media": 1}},
		{in: "medai=1", wantErr: `queue "medai": unknown queue (known: audiences, catalogs, compliance, default, insights, media, webhooks)`},
		{in: "media=0", wantErr: "weight must be a positive integer"},
		{in: "media=x", wantErr: "weight must be a positive integer"},
		{in: " , ", wantErr: "no queues configured"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := (&config{WorkerQueues: tc.in}).queues()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("queues(%q) error = %v, want %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("queues(%q): %v", tc.in, err)
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("queues(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

// TestDefaultQueues: the default of AVIARY_WORKER_QUEUES (shown in the
// help) names every queue with its weight, in name order.
func TestDefaultQueues(t *testing.T) {
	const want = "audiences=2,catalogs=1,compliance=3,default=2,insights=1,media=1,webhooks=1"
	if got := defaultQueues(); got != want {
		t.Errorf("defaultQueues() = %q, want %q", got, want)
	}
}
