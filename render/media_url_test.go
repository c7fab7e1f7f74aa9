package render

import (
	"testing"

	"github.com/aviary-dev/aviary/storage"
)

// TestRenderMediaURLs: url is a photo's processed copy, preview_image_url
// a video's or GIF's poster frame, each only when asked for, processed and
// with a builder.
func TestRenderMediaURLs(t *testing.T) {
	urls := NewMediaURLs("https://aviary.example/")
	photo := storage.Media{Key: "3_1", Kind: storage.MediaPhoto, State: storage.MediaSucceeded,
		OutputKey: "media/1/media.jpg", OutputType: "image/jpeg"}
	video := storage.Media{Key: "7_2", Kind: storage.MediaVideo, State: storage.MediaSucceeded,
		OutputKey: "media/2/media.mp4", PreviewKey: "media/2/preview.jpg"}
	gif := storage.Media{Key: "16_3", Kind: storage.MediaAnimatedGIF, State: storage.MediaSucceeded,
		OutputKey: "media/3/media.mp4", PreviewKey: "media/3/preview.jpg"}
	pending := photo
	pending.State, pending.OutputKey = storage.MediaPending, ""
	both := ObjectFields{}.With("url", "preview_image_url")
	tests := []struct {
		name             string
		m                storage.Media
		f                FieldSet
		urls             *MediaURLs
		wantURL, wantPre string
	}{
		{"photo url", photo, both, urls, "https://aviary.example/media/3_1/media.jpg", ""},
		{"photo not asked", photo, ObjectFields{}.With("width"), urls, "", ""},
		{"video preview", video, both, urls, "", "https://aviary.example/media/7_2/preview.jpg"},
		{"video not asked", video, ObjectFields{}.With("url"), urls, "", ""},
		{"gif preview", gif, both, urls, "", "https://aviary.example/media/16_3/preview.jpg"},
		{"not processed", pending, both, urls, "", ""},
		{"no builder", photo, both, nil, "", ""},
	}
	for _, tc := range tests {
		got := renderMedia(tc.m, tc.f, tc.urls)
		if got.URL != tc.wantURL || got.PreviewImageURL != tc.wantPre {
			t.Errorf("%s: url %q preview %q, want %q %q", tc.name, got.URL, got.PreviewImageURL, tc.wantURL, tc.wantPre)
		}
	}
	if NewMediaURLs("") != nil {
		t.Error("an empty base builds URLs")
	}
}
