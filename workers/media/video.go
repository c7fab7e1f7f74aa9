package media

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/internal/logctx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/tasks"
)

// evenScale rounds both dimensions up to even numbers (yuv420p needs them).
const evenScale = "scale=trunc((iw+1)/2)*2:trunc((ih+1)/2)*2"

func (p *Processor) ffmpeg() string {
	if p.FFmpeg != "" {
		return p.FFmpeg
	}
	return "ffmpeg"
}

func (p *Processor) ffprobe() string {
	if p.FFprobe != "" {
		return p.FFprobe
	}
	return "ffprobe"
}

// video probes a video or animated GIF, checks it against media_type and
// the uploader's duration limit, transcodes it to H.264/AAC MP4 and takes
// a poster frame.
func (p *Processor) video(ctx context.Context, j *job) (storage.MediaResult, error) {
	probed, err := p.probe(ctx, j.original, j.media.MediaType)
	if err != nil {
		return storage.MediaResult{}, err
	}
	info, err := inspect(probed, j.media.MediaType)
	if err != nil {
		return storage.MediaResult{}, err
	}
	if err := checkDuration(info, j.limit); err != nil {
		return storage.MediaResult{}, err
	}
	if err := p.checkFrames(info, j.media.Kind); err != nil {
		return storage.MediaResult{}, err
	}
	out, poster := filepath.Join(j.dir, "media.mp4"), filepath.Join(j.dir, "preview.jpg")
	if err := p.transcode(ctx, j, info, out); err != nil {
		return storage.MediaResult{}, err
	}
	if err := p.poster(ctx, out, info.duration, poster); err != nil {
		return storage.MediaResult{}, err
	}
	res := storage.MediaResult{Width: info.width, Height: info.height, DurationMS: info.duration.Milliseconds(),
		AspectRatio: aspectRatio(info.width, info.height), OutputType: "video/mp4",
		OutputKey: storage.MediaOutputKey(j.media.ID, "mp4"), PreviewKey: storage.MediaPreviewKey(j.media.ID)}
	if err := p.putFile(ctx, res.OutputKey, out, res.OutputType); err != nil {
		return storage.MediaResult{}, err
	}
	if err := p.putFile(ctx, res.PreviewKey, poster, "image/jpeg"); err != nil {
		return storage.MediaResult{}, err
	}
	return res, nil
}

// checkDuration holds the video to the uploader's duration limit.
func checkDuration(info videoInfo, limit storage.MediaLimit) error {
	switch {
	case limit.Duration <= 0:
		return nil
	case info.duration <= 0:
		return invalid("The video's duration could not be read.")
	case info.duration > limit.Duration:
		return tooLarge("The video is %.1f seconds long; the allowed length for this account is %s.",
			info.duration.Seconds(), limit.DescribeDuration())
	}
	return nil
}

// Animated GIF limits, the platform's documented ones: a GIF is decoded
// frame by frame at its full canvas size, so a tiny file can otherwise ask
// for gigabytes of memory or hours of encoding.
const (
	maxGIFFrames = 350
	maxGIFPixels = 300_000_000 // width x height x frames
)

// checkFrames holds the video to the processing limits: each side at most
// MaxVideoSide; for animated GIFs the frame and pixel budgets, for videos
// the pixel-rate and pixel budgets (the work budget).
func (p *Processor) checkFrames(info videoInfo, kind string) error {
	if side := p.maxVideoSide(); info.width > side || info.height > side {
		return tooLarge("The video is %dx%d pixels; each side may be at most %d.", info.width, info.height, side)
	}
	if kind != storage.MediaAnimatedGIF {
		return p.checkBudget(info)
	}
	if info.frames > maxGIFFrames {
		return tooLarge("The GIF has %d frames; at most %d are allowed.", info.frames, maxGIFFrames)
	}
	if pixels := int64(info.width) * int64(info.height) * int64(max(info.frames, 1)); pixels > maxGIFPixels {
		return tooLarge("The GIF has %d pixels over its frames (width x height x frames); at most %d are allowed.", pixels, maxGIFPixels)
	}
	return nil
}

// checkBudget holds a video to the work budget: its pixel rate (width x
// height x frames per second) and its pixels over all frames, so a small
// file cannot ask for hours of transcoding.
func (p *Processor) checkBudget(info videoInfo) error {
	if rate, limit := info.pixelRate(), p.videoMaxPixelRate(); rate > float64(limit) {
		return tooLarge("The video is %dx%d pixels at %.0f frames per second, %.0f pixels per second; at most %d are allowed.",
			info.width, info.height, rate/float64(int64(info.width)*int64(info.height)), rate, limit)
	}
	if pixels, limit := info.pixels(), p.videoMaxPixels(); pixels > limit {
		return tooLarge("The video has %d pixels over its %d frames (width x height x frames); at most %d are allowed.",
			pixels, info.frames, limit)
	}
	return nil
}

func (p *Processor) videoMaxPixelRate() int64 {
	if p.VideoMaxPixelRate > 0 {
		return p.VideoMaxPixelRate
	}
	return tasks.MediaVideoMaxPixelRate
}

func (p *Processor) videoMaxPixels() int64 {
	if p.VideoMaxPixels > 0 {
		return p.VideoMaxPixels
	}
	return tasks.MediaVideoMaxPixels
}

// aspectRatio is "W:H" reduced by their greatest common divisor.
func aspectRatio(w, h int) string {
	a, b := w, h
	for b != 0 {
		a, b = b, a%b
	}
	if a == 0 {
		return ""
	}
	return fmt.Sprintf("%d:%d", w/a, h/a)
}

// transcodeArgs are ffmpeg's arguments to turn the probed input into an
// H.264 (and AAC, when there is audio) MP4 that starts playing at once,
// reporting progress on stdout.
func transcodeArgs(in, out string, info videoInfo) []string {
	args := []string{"-hide_banner", "-nostdin", "-y", "-v", "error", "-i", in,
		"-map", fmt.Sprintf("0:%d", info.video.Index)}
	if info.audio != nil {
		args = append(args, "-map", fmt.Sprintf("0:%d", info.audio.Index), "-c:a", "aac", "-b:a", "128k")
	} else {
		args = append(args, "-an")
	}
	return append(args, "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-vf", evenScale,
		"-movflags", "+faststart", "-progress", "pipe:1", "-nostats", "-f", "mp4", out)
}

// transcode runs ffmpeg under ctx (cancelling ctx kills it), recording its
// progress on the media. It may take tasks.MediaTranscodeTimeout of the
// video's pixels: a video that needs longer fails with code 2 (not
// retried), so one upload costs at most one such run.
func (p *Processor) transcode(ctx context.Context, j *job, info videoInfo, out string) error {
	limit := tasks.MediaTranscodeTimeout(info.pixels())
	ctx, cancel := context.WithTimeoutCause(ctx, limit, errTranscodeBudget)
	defer cancel()
	cmd := command(ctx, p.ffmpeg(), transcodeArgs(j.original, out, info)...)
	stderr := &tailBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("ffmpeg stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start ffmpeg: %w", err)
	}
	tracker := &progress{store: p.Store, log: logctx.OrDefault(p.Logger), id: j.media.ID, every: p.progressEvery()}
	tracker.follow(ctx, stdout, info.duration)
	return p.transcodeResult(ctx, cmd.Wait(), stderr, j.media.MediaType)
}

// transcodeResult classifies how ffmpeg ended: cancelled, refusing the
// input (a client error), or failing for a reason of the machine's.
func (p *Processor) transcodeResult(ctx context.Context, err error, stderr *tailBuffer, mediaType string) error {
	if err == nil {
		return nil
	}
	if errors.Is(context.Cause(ctx), errTranscodeBudget) {
		return tooLarge("The video could not be transcoded within its work budget.")
	}
	if ctx.Err() != nil {
		return fmt.Errorf("ffmpeg stopped: %w", context.Cause(ctx))
	}
	if refusedInput(err, stderr.String()) {
		logctx.OrDefault(p.Logger).InfoContext(ctx, "ffmpeg rejected the upload", "stderr", stderr.String())
		return invalid("The file could not be decoded as %s.", mediaType)
	}
	return fmt.Errorf("ffmpeg: %w: %s", err, stderr.String())
}

// errTranscodeBudget is the cause of a transcode stopped at its deadline.
var errTranscodeBudget = errors.New("transcode over its work budget")

// machineFailures are ffmpeg messages that blame the machine, not the
// input: the task is retried.
var machineFailures = []string{"No space left on device", "Permission denied", "Cannot allocate memory",
	"Unknown encoder", "Encoder not found", "Too many open files"}

// signalExit is the status ffmpeg exits with after a signal (SIGINT,
// SIGTERM) asked it to stop: not the input's fault.
const signalExit = 255

// refusedInput reports whether err is ffmpeg or ffprobe exiting on its own
// because of the input (not a signal, not the machine).
func refusedInput(err error, stderr string) bool {
	var exit *exec.ExitError
	return errors.As(err, &exit) && exit.Exited() && exit.ExitCode() != signalExit && !machineFailure(stderr)
}

func machineFailure(stderr string) bool {
	for _, m := range machineFailures {
		if strings.Contains(stderr, m) {
			return true
		}
	}
	return false
}

// poster writes one frame of the transcoded video src as a JPEG: at half
// its duration, at most 1 s in, or the first frame if that yields none.
func (p *Processor) poster(ctx context.Context, src string, duration time.Duration, out string) error {
	for _, at := range []time.Duration{min(duration/2, time.Second), 0} {
		cmd := command(ctx, p.ffmpeg(), "-hide_banner", "-nostdin", "-y", "-v", "error",
			"-ss", strconv.FormatFloat(at.Seconds(), 'f', 3, 64), "-i", src,
			"-frames:v", "1", "-q:v", "3", "-update", "1", "-f", "image2", out)
		if msg, err := cmd.CombinedOutput(); err != nil {
			return posterError(err, strings.TrimSpace(string(msg)))
		}
		if fi, err := os.Stat(out); err == nil && fi.Size() > 0 {
			return nil
		}
	}
	return invalid("The file holds no video frame.")
}

func (p *Processor) progressEvery() time.Duration {
	if p.ProgressEvery > 0 {
		return p.ProgressEvery
	}
	return time.Second
}

// progress records a transcode's progress_percent, at most once per every
// unless it advanced 5 points, never backwards and never 100 (that comes
// with the result).
type progress struct {
	store Store
	log   *slog.Logger
	id    int64
	every time.Duration
	sent  int
	at    time.Time
}

// follow reads ffmpeg's -progress output until it ends. out_time_us (and
// out_time_ms, which ffmpeg also gives in microseconds) against the
// input's duration is the progress.
func (pr *progress) follow(ctx context.Context, r io.Reader, total time.Duration) {
	totalUS := total.Microseconds()
	sc := bufio.NewScanner(r)
	for totalUS > 0 && sc.Scan() {
		key, val, _ := strings.Cut(sc.Text(), "=")
		if key != "out_time_us" && key != "out_time_ms" {
			continue
		}
		if us, err := strconv.ParseInt(val, 10, 64); err == nil {
			pr.report(ctx, int(us*100/totalUS))
		}
	}
	// Keep draining so ffmpeg never blocks on a full pipe.
	_, _ = io.Copy(io.Discard, r)
}

func (pr *progress) report(ctx context.Context, percent int) {
	percent = min(percent, 99)
	if percent <= pr.sent || (percent-pr.sent < 5 && time.Since(pr.at) < pr.every) {
		return
	}
	pr.sent, pr.at = percent, time.Now()
	if err := pr.store.SetMediaProgress(ctx, pr.id, percent); err != nil && ctx.Err() == nil {
		pr.log.WarnContext(ctx, "record media progress", "media_id", pr.id, "err", err)
	}
}

// posterError classifies a poster-frame ffmpeg failure. The transcode
// succeeded, so ffmpeg refusing its own output means the output holds no
// frame (a GIF without images, say): the upload's fault, not retried.
// Failures that blame the machine are retried.
func posterError(err error, output string) error {
	if refusedInput(err, output) {
		return invalid("The file holds no video frame.")
	}
	return fmt.Errorf("poster frame: %w: %s", err, output)
}
