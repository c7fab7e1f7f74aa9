package storage

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func TestCheckSegments(t *testing.T) {
	tests := []struct {
		name    string
		total   int64
		sizes   map[int]int64
		missing []int
		ok      bool
	}{
		{"complete", 10, map[int]int64{0: 4, 1: 6}, nil, true},
		{"one", 3, map[int]int64{0: 3}, nil, true},
		{"gap", 10, map[int]int64{0: 4, 2: 6}, []int{1}, false},
		{"no first", 6, map[int]int64{1: 6}, []int{0}, false},
		{"short", 10, map[int]int64{0: 4}, nil, false},
		{"empty", 10, nil, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckSegments(tc.total, tc.sizes)
			if tc.ok {
				if err != nil {
					t.Fatalf("CheckSegments = %v, want nil", err)
				}
				return
			}
			var segErr *SegmentsError
			if !errors.As(err, &segErr) {
				t.Fatalf("CheckSegments = %v, want a *SegmentsError", err)
			}
			if !slices.Equal(segErr.Missing, tc.missing) || segErr.Total != tc.total {
				t.Errorf("error %+v, want missing %v of total %d", segErr, tc.missing, tc.total)
			}
		})
	}
}

func TestMediaLimitFor(t *testing.T) {
	tests := []struct {
		category string
		elevated bool
		bytes    int64
		duration string
	}{
		{MediaTweetImage, false, 5 << 20, "0 minutes"},
		{MediaTweetGIF, true, 15 << 20, "0 minutes"},
		{MediaTweetVideo, false, 8 << 30, "20 minutes"},
		{MediaAmplifyVideo, true, 16 << 30, "125 minutes"},
		{MediaDMVideo, false, 512 << 20, "140 seconds"},
		{MediaDMVideo, true, 1 << 30, "10 minutes"},
	}
	for _, tc := range tests {
		l := MediaLimitFor(tc.category, tc.elevated)
		if l.Bytes != tc.bytes || l.DescribeDuration() != tc.duration {
			t.Errorf("MediaLimitFor(%s, %v) = %d bytes, %s; want %d, %s", tc.category, tc.elevated, l.Bytes, l.DescribeDuration(), tc.bytes, tc.duration)
		}
	}
	if got := MediaLimitFor(MediaDMVideo, false).Duration; got != 140*time.Second {
		t.Errorf("dm_video default duration = %v", got)
	}
}

func TestMediaKeysAndCategories(t *testing.T) {
	for _, c := range MediaCategories {
		if len(MediaTypesOf(c)) == 0 {
			t.Errorf("category %s takes no media type", c)
		}
		for _, mt := range MediaTypesOf(c) {
			if !slices.Contains(MediaTypes, mt) {
				t.Errorf("category %s takes %s, which is not in MediaTypes", c, mt)
			}
		}
	}
	for kind, want := range map[string]string{MediaPhoto: "3_42", MediaVideo: "7_42", MediaAnimatedGIF: "16_42"} {
		if got := MediaKey(kind, 42); got != want {
			t.Errorf("MediaKey(%s) = %s, want %s", kind, got, want)
		}
	}
	for mt, want := range map[string]string{"image/png": MediaTweetImage, "image/gif": MediaTweetGIF, "video/mp4": MediaTweetVideo, "text/vtt": MediaSubtitles} {
		if got := DefaultMediaCategory(mt); got != want {
			t.Errorf("DefaultMediaCategory(%s) = %s, want %s", mt, got, want)
		}
	}
}
