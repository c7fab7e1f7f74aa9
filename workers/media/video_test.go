package media

import (
	"bytes"
	"image"
	"image/color"
	"image/color/palette"
	"image/gif"
	"image/jpeg"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// wantVideo is what a processed video or GIF must look like.
type wantVideo struct {
	width, height  int
	outW, outH     int // the transcoded stream's dimensions
	aspect         string
	durationMS     int64 // +-150 ms
	audio          bool
	progressWrites bool
}

func TestProcessVideos(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	premium := factory.User(t, e.db, nil)
	if err := e.db.SetUserFlag(t.Context(), premium.ID, "premium", true); err != nil {
		t.Fatal(err)
	}
	short := shortVideo(t)
	odd := generated(t, "odd.mov", "-f", "lavfi", "-i", "testsrc=size=65x49:rate=10:duration=1", "-c:v", "libx264", "-pix_fmt", "yuv444p")
	audioOnly := generated(t, "tone.m4a", "-f", "lavfi", "-i", "sine=frequency=440:duration=1", "-c:a", "aac")
	tests := []struct {
		name      string
		mediaType string
		category  string
		data      []byte
		owner     storage.User
		want      *wantVideo
		wantCode  int
		wantMsg   string
	}{
		{name: "mp4 with audio", mediaType: "video/mp4", data: short,
			want: &wantVideo{width: 64, height: 48, outW: 64, outH: 48, aspect: "4:3", durationMS: 3000, audio: true, progressWrites: true}},
		{name: "odd dimensions", mediaType: "video/quicktime", category: storage.MediaDMVideo, data: odd,
			want: &wantVideo{width: 65, height: 49, outW: 66, outH: 50, aspect: "65:49", durationMS: 1000}},
		{name: "animated gif", mediaType: "image/gif", data: animatedGIF(t, 40, 30, 3),
			want: &wantVideo{width: 40, height: 30, outW: 40, outH: 30, aspect: "4:3", durationMS: 300}},
		{name: "long dm video of a premium user", mediaType: "video/mp4", category: storage.MediaDMVideo, data: longVideo(t), owner: premium,
			want: &wantVideo{width: 64, height: 48, outW: 64, outH: 48, aspect: "4:3", durationMS: 150000}},

		{name: "long dm video", mediaType: "video/mp4", category: storage.MediaDMVideo, data: longVideo(t),
			wantCode: storage.MediaErrorTooLarge, wantMsg: "The video is 150.0 seconds long; the allowed length for this account is 140 seconds."},
		{name: "garbage", mediaType: "video/mp4", data: bytes.Repeat([]byte("not a video "), 1000),
			wantCode: storage.MediaErrorInvalidMedia, wantMsg: "The file could not be read as video/mp4."},
		{name: "mp4 declared as webm", mediaType: "video/webm", data: short,
			wantCode: storage.MediaErrorInvalidMedia, wantMsg: "not video/webm"},
		{name: "no video stream", mediaType: "video/mp4", data: audioOnly,
			wantCode: storage.MediaErrorInvalidMedia, wantMsg: "The file has no video stream."},
		{name: "png declared as gif", mediaType: "image/gif", data: encodeImage(t, "png", 8, 8),
			wantCode: storage.MediaErrorInvalidMedia, wantMsg: "not image/gif"},
		{name: "gif with too many frames", mediaType: "image/gif", data: animatedGIF(t, 2, 2, maxGIFFrames+1),
			wantCode: storage.MediaErrorTooLarge, wantMsg: "The GIF has 351 frames; at most 350 are allowed."},
		{name: "gif canvas over the side limit", mediaType: "image/gif", data: gifCanvas(t, 5000, 10, 2),
			wantCode: storage.MediaErrorTooLarge, wantMsg: "The video is 5000x10 pixels; each side may be at most 4096."},
		{name: "gif over the pixel budget", mediaType: "image/gif", data: gifCanvas(t, 4000, 4000, 20),
			wantCode: storage.MediaErrorTooLarge, wantMsg: "The GIF has 320000000 pixels over its frames"},
		// A header and a trailer, no image: ffmpeg "transcodes" nothing, so
		// the poster frame finds no stream. The upload's fault, not retried.
		{name: "gif without frames", mediaType: "image/gif", data: []byte("GIF89a\x10\x00\x10\x00\x00\x00\x00;"),
			wantCode: storage.MediaErrorInvalidMedia, wantMsg: "no video frame"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := e.record(t, upload{mediaType: tc.mediaType, category: tc.category, data: tc.data, owner: tc.owner, finalize: true})
			p, spy := e.processor(t, nil)
			err := process(t, p, m.ID)
			if tc.want == nil {
				name := ErrorNameInvalidMedia
				if tc.wantCode == storage.MediaErrorTooLarge {
					name = ErrorNameLimitExceeded
				}
				e.wantFailed(t, err, m.ID, tc.wantCode, name, tc.wantMsg)
				e.wantNoObject(t, storage.MediaOutputKey(m.ID, "mp4"))
				e.wantNoObject(t, storage.MediaPreviewKey(m.ID))
				return
			}
			if err != nil {
				t.Fatalf("ProcessTask: %v", err)
			}
			e.wantVideo(t, m.ID, *tc.want)
			wantProgress(t, spy.progressWrites(), tc.want.progressWrites)
		})
	}
}

// wantVideo checks a processed video, its MP4 and its poster frame.
func (e *env) wantVideo(t *testing.T, id int64, want wantVideo) {
	t.Helper()
	m := e.load(t, id)
	if m.State != storage.MediaSucceeded || m.ProgressPercent != 100 || m.Width != want.width || m.Height != want.height ||
		m.AspectRatio != want.aspect || m.OutputType != "video/mp4" || m.OutputKey != storage.MediaOutputKey(id, "mp4") ||
		m.PreviewKey != storage.MediaPreviewKey(id) {
		t.Fatalf("media = %s %d%% %dx%d %q %s %s %s", m.State, m.ProgressPercent, m.Width, m.Height, m.AspectRatio,
			m.OutputType, m.OutputKey, m.PreviewKey)
	}
	if d := m.DurationMS - want.durationMS; d < -150 || d > 150 {
		t.Errorf("duration_ms = %d, want about %d", m.DurationMS, want.durationMS)
	}
	out, ctype := e.object(t, m.OutputKey)
	if ctype != "video/mp4" {
		t.Errorf("output content type %q", ctype)
	}
	info := probeBytes(t, out, "video/mp4")
	if info.video.CodecName != "h264" || info.video.Width != want.outW || info.video.Height != want.outH {
		t.Errorf("output video = %s %dx%d, want h264 %dx%d", info.video.CodecName, info.video.Width, info.video.Height, want.outW, want.outH)
	}
	switch {
	case want.audio && (info.audio == nil || info.audio.CodecName != "aac"):
		t.Errorf("output audio = %+v, want aac", info.audio)
	case !want.audio && info.audio != nil:
		t.Errorf("output has %s audio, want none", info.audio.CodecName)
	}
	preview, _ := e.object(t, m.PreviewKey)
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(preview))
	if err != nil || cfg.Width != want.outW || cfg.Height != want.outH {
		t.Errorf("preview = %dx%d (err %v), want a %dx%d JPEG", cfg.Width, cfg.Height, err, want.outW, want.outH)
	}
}

// probeBytes runs the package's own probe on data.
func probeBytes(t *testing.T, data []byte, mediaType string) videoInfo {
	t.Helper()
	path := filepath.Join(t.TempDir(), "probe")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := (&Processor{}).probe(t.Context(), path, mediaType)
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	info, err := inspect(res, mediaType)
	if err != nil {
		t.Fatalf("inspect: %v", err)
	}
	return info
}

// wantProgress checks the progress writes of a transcode: rising, below
// 100, and present when required.
func wantProgress(t *testing.T, writes []int, required bool) {
	t.Helper()
	if required && len(writes) == 0 {
		t.Error("no progress was recorded")
	}
	for i, p := range writes {
		if p < 1 || p > 99 || (i > 0 && p <= writes[i-1]) {
			t.Errorf("progress writes %v: %d is out of 1-99 or does not rise", writes, p)
		}
	}
}

// TestProgressThrottle: writes at most once per interval unless the
// progress advanced 5 points, never backwards, never 100.
func TestProgressThrottle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.record(t, upload{mediaType: "video/mp4", data: []byte("x"), finalize: true})
	if _, err := e.db.StartMediaProcessing(t.Context(), m.ID, e.now); err != nil {
		t.Fatal(err)
	}
	spy := &spyStore{Store: e.db}
	pr := &progress{store: spy, log: e.log, id: m.ID, every: time.Hour}
	for _, p := range []int{1, 2, 3, 6, 6, 5, 10, 11, 40, 120} {
		pr.report(t.Context(), p)
	}
	if got, want := spy.progressWrites(), []int{1, 6, 11, 40, 99}; !slices.Equal(got, want) {
		t.Errorf("writes = %v, want %v", got, want)
	}
	if got := e.load(t, m.ID).ProgressPercent; got != 99 {
		t.Errorf("progress_percent = %d, want 99", got)
	}
}

func TestAspectRatio(t *testing.T) {
	for _, tc := range []struct {
		w, h int
		want string
	}{{1920, 1080, "16:9"}, {64, 48, "4:3"}, {65, 49, "65:49"}, {720, 1280, "9:16"}, {500, 500, "1:1"}, {0, 0, ""}} {
		if got := aspectRatio(tc.w, tc.h); got != tc.want {
			t.Errorf("aspectRatio(%d, %d) = %q, want %q", tc.w, tc.h, got, tc.want)
		}
	}
}

// gifCanvas is a GIF whose logical screen is w x h while each of its
// frames is one pixel: tiny on disk, large once decoded.
func gifCanvas(t *testing.T, w, h, frames int) []byte {
	t.Helper()
	anim := &gif.GIF{Config: image.Config{Width: w, Height: h, ColorModel: color.Palette(palette.Plan9)}}
	for range frames {
		anim.Image = append(anim.Image, image.NewPaletted(image.Rect(0, 0, 1, 1), palette.Plan9))
		anim.Delay = append(anim.Delay, 10)
	}
	var buf bytes.Buffer
	if err := gif.EncodeAll(&buf, anim); err != nil {
		t.Fatalf("encode GIF: %v", err)
	}
	return buf.Bytes()
}
