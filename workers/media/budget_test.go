package media

import (
	"errors"
	"testing"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/tasks"
)

// hostileVideo is issue 24's shape: 4096x4096 at 60 fps, a tiny file
// (here half a second of black) that asks for a huge transcode.
func hostileVideo(t *testing.T) []byte {
	return generated(t, "hostile.mp4", "-f", "lavfi", "-i", "color=c=black:s=4096x4096:r=60:d=0.5",
		"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p")
}

// TestVideoWorkBudget: a video over the pixel-rate or pixel budget fails
// at once with LimitExceeded, from ffprobe's figures, before ffmpeg runs
// (the processor's ffmpeg does not exist: a transcode would be a retried
// error, not this failure).
func TestVideoWorkBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	short := shortVideo(t) // 64x48, 10 fps, 3 s: 30 frames
	tests := []struct {
		name    string
		data    []byte
		rate    int64
		pixels  int64
		wantMsg string
	}{
		{name: "hostile video, default budget", data: hostileVideo(t),
			wantMsg: "The video is 4096x4096 pixels at 60 frames per second, 1006632960 pixels per second; at most 138240000 are allowed."},
		{name: "over a lowered pixel rate", data: short, rate: 64 * 48 * 9,
			wantMsg: "The video is 64x48 pixels at 10 frames per second, 30720 pixels per second; at most 27648 are allowed."},
		{name: "over a lowered pixel budget", data: short, pixels: 64 * 48 * 29,
			wantMsg: "The video has 92160 pixels over its 30 frames (width x height x frames); at most 89088 are allowed."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := e.record(t, upload{mediaType: "video/mp4", data: tc.data, finalize: true})
			p, _ := e.processor(t, nil)
			p.FFmpeg = "/nonexistent/ffmpeg"
			p.VideoMaxPixelRate, p.VideoMaxPixels = tc.rate, tc.pixels
			err := process(t, p, m.ID)
			e.wantFailed(t, err, m.ID, storage.MediaErrorTooLarge, ErrorNameLimitExceeded, tc.wantMsg)
		})
	}
	t.Run("within the budget", func(t *testing.T) {
		t.Parallel()
		m := e.record(t, upload{mediaType: "video/mp4", data: short, finalize: true})
		p, _ := e.processor(t, nil)
		p.VideoMaxPixelRate, p.VideoMaxPixels = 64*48*10, 64*48*30
		if err := process(t, p, m.ID); err != nil {
			t.Fatalf("ProcessTask: %v", err)
		}
		if got := e.load(t, m.ID); got.State != storage.MediaSucceeded {
			t.Fatalf("state %s, want succeeded", got.State)
		}
	})
}

// TestTranscodeTimeoutScales: the task timeout follows the default budget
// (no longer 3 h) and a video's transcode deadline its own pixels.
func TestTranscodeTimeoutScales(t *testing.T) {
	if got := tasks.MediaTranscodeTimeout(tasks.MediaVideoMaxPixels); got+30*60e9 != tasks.MediaTaskTimeout {
		t.Errorf("MediaTaskTimeout %s, want the default budget's transcode %s plus 30 min", tasks.MediaTaskTimeout, got)
	}
	if tasks.MediaTaskTimeout >= 3*3600e9 {
		t.Errorf("MediaTaskTimeout %s, want under the old 3 h", tasks.MediaTaskTimeout)
	}
	if small, large := tasks.MediaTranscodeTimeout(64*48*30), tasks.MediaTranscodeTimeout(1920*1080*30*60); small >= large || small > 61e9 {
		t.Errorf("transcode deadlines %s (tiny) and %s (a 1080p minute)", small, large)
	}
}

// TestMediaSlots: with its class's slots taken, a media task is deferred
// (tasks.ErrDeferred, the media left pending), while the other class
// still runs.
func TestMediaSlots(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	video := e.record(t, upload{mediaType: "video/mp4", data: shortVideo(t), finalize: true})
	photo := e.record(t, upload{mediaType: "image/png", data: encodeImage(t, "png", 4, 4), finalize: true})
	p, _ := e.processor(t, nil)
	p.Slots = Slots{Video: 1, Image: 1}
	holder := e.record(t, upload{mediaType: "video/mp4", data: shortVideo(t), finalize: true})
	release, err := p.Slots.take(t.Context(), e.db, holder.ID) // a running video
	if err != nil {
		t.Fatal(err)
	}
	if err := process(t, p, video.ID); !errors.Is(err, tasks.ErrDeferred) {
		t.Fatalf("video with the video slot taken: %v, want tasks.ErrDeferred", err)
	}
	if got := e.load(t, video.ID); got.State != storage.MediaPending || got.Attempts != 0 {
		t.Errorf("deferred video %s after %d attempts, want pending, untouched", got.State, got.Attempts)
	}
	if err := process(t, p, photo.ID); err != nil {
		t.Fatalf("image while the video slot is taken: %v", err)
	}
	release()
	if err := process(t, p, video.ID); err != nil {
		t.Fatalf("video once the slot is free: %v", err)
	}
	if got := e.load(t, video.ID); got.State != storage.MediaSucceeded {
		t.Errorf("video %s, want succeeded", got.State)
	}
}
