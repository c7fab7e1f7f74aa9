package media

import (
	"bytes"
	"testing"

	"github.com/aviary-dev/aviary/storage"
)

// TestSniff: the one-shot upload recognises the platform's formats from
// their first bytes.
func TestSniff(t *testing.T) {
	ts := make([]byte, 189)
	ts[0], ts[188] = 0x47, 0x47
	tests := []struct {
		name, category, want string
		data                 []byte
	}{
		{"png", storage.MediaTweetImage, "image/png", []byte("\x89PNG\r\n\x1a\n....")},
		{"jpeg", storage.MediaTweetImage, "image/jpeg", []byte("\xff\xd8\xff\xe0....")},
		{"gif", storage.MediaTweetGIF, "image/gif", []byte("GIF89a....")},
		{"webp", storage.MediaTweetImage, "image/webp", []byte("RIFF\x00\x00\x00\x00WEBPVP8 ")},
		{"bmp", storage.MediaTweetImage, "image/bmp", []byte("BM......")},
		{"tiff", storage.MediaTweetImage, "image/tiff", []byte("II*\x00....")},
		{"mp4", storage.MediaTweetVideo, "video/mp4", []byte("\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2")},
		{"quicktime", storage.MediaTweetVideo, "video/quicktime", []byte("\x00\x00\x00\x14ftypqt  \x00\x00\x00\x00")},
		{"webm", storage.MediaTweetVideo, "video/webm", []byte("\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81\x01\x42\xf2\x81\x04\x42\xf3\x81\x08\x42\x82\x84webm")},
		{"mpeg-ts", storage.MediaTweetVideo, "video/mp2t", ts},
		{"vtt", storage.MediaSubtitles, "text/vtt", []byte("\xef\xbb\xbfWEBVTT\n\n")},
		{"srt", storage.MediaSubtitles, "text/srt", []byte("1\n00:00:01,000 --> 00:00:02,000\nHi\n")},
		{"unknown", storage.MediaTweetImage, "", bytes.Repeat([]byte{0}, 32)},
	}
	for _, tc := range tests {
		if got := sniff(tc.data, tc.category); got != tc.want {
			t.Errorf("%s: sniff = %q, want %q", tc.name, got, tc.want)
		}
	}
}
