package media

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"golang.org/x/sync/semaphore"

	"github.com/aviary-dev/aviary/internal/logctx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob"
	"github.com/aviary-dev/aviary/tasks"
)

// Processor handles TypeMediaProcess tasks (docs/media-upload.md,
// "Processing"): it moves the media to in_progress, assembles the uploaded
// segments into the original (or, on a retry after assembly, downloads
// it), processes it by kind and records the result. Bytes that are not what
// media_type says or break a limit fail the media for good (code 1 or 2);
// other errors are returned so asynq retries the task, and FinalFailure
// fails the media with code 3 when the retries are used up.
type Processor struct {
	Store Store
	// Faults injects processing failures (docs/faults.md); nil: none.
	Faults Faults
	Blobs  blob.Store
	Logger *slog.Logger
	Clock  func() time.Time
	// TempDir is where each task makes its working directory (the
	// assembled upload, the transcoded output), removed when the task
	// ends; "" means os.TempDir().
	TempDir string
	// FFmpeg and FFprobe are the binaries run for video and animated GIFs
	// (defaults "ffmpeg" and "ffprobe", looked up on PATH).
	FFmpeg  string
	FFprobe string
	// ProgressEvery is the least time between two progress writes of a
	// transcode, unless it advanced 5 points (default 1 s).
	ProgressEvery time.Duration
	// MaxImageSide caps a photo's width and height (default 8192).
	MaxImageSide int
	// MaxVideoSide caps a video's or animated GIF's width and height
	// (default 4096).
	MaxVideoSide int
	// DecodeBudget is the memory all photo decodes of this worker may
	// take at once, estimated from their dimensions (default 1 GiB): a
	// decode waits for room, and one that could never fit fails with
	// code 2.
	DecodeBudget int64
	// VideoMaxPixelRate and VideoMaxPixels are a video's work budget:
	// width x height x frames per second, and over all frames (defaults
	// tasks.MediaVideoMaxPixelRate and tasks.MediaVideoMaxPixels).
	VideoMaxPixelRate int64
	VideoMaxPixels    int64
	// Slots caps the tasks of each class (videos and animated GIFs;
	// photos and subtitles) this worker runs at once (see slots.go).
	Slots Slots

	budgetOnce sync.Once
	budget     *semaphore.Weighted
}

// job is one attempt at one media: its record, the uploader's limit and
// the working files.
type job struct {
	media    storage.Media
	limit    storage.MediaLimit
	dir      string // working directory, removed after the attempt
	original string // the assembled upload
	size     int64
}

func (p *Processor) maxVideoSide() int {
	if p.MaxVideoSide > 0 {
		return p.MaxVideoSide
	}
	return 4096
}

// decodeBudget is the semaphore of DecodeBudget bytes and its size.
func (p *Processor) decodeBudget() (*semaphore.Weighted, int64) {
	size := p.DecodeBudget
	if size <= 0 {
		size = 1 << 30
	}
	p.budgetOnce.Do(func() { p.budget = semaphore.NewWeighted(size) })
	return p.budget, size
}

func (p *Processor) now() time.Time {
	if p.Clock != nil {
		return p.Clock().UTC()
	}
	return time.Now().UTC()
}

// ProcessTask implements asynq.Handler.
func (p *Processor) ProcessTask(ctx context.Context, t *asynq.Task) error {
	payload, err := tasks.ParseMediaProcess(t)
	if err != nil {
		return err
	}
	release, err := p.Slots.take(ctx, p.Store, payload.MediaID)
	if err != nil {
		return err
	}
	defer release()
	m, err := p.Store.StartMediaProcessing(ctx, payload.MediaID, p.now())
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return fmt.Errorf("media %d does not exist: %w", payload.MediaID, asynq.SkipRetry)
	case errors.Is(err, storage.ErrConflict):
		logctx.OrDefault(p.Logger).InfoContext(ctx, "media not processed: nothing to do in its state", "media_id", m.ID, "state", m.State)
		return nil
	case err != nil:
		return fmt.Errorf("start processing media %d: %w", payload.MediaID, err)
	}
	log := logctx.OrDefault(p.Logger).With("media_id", m.ID, "kind", m.Kind, "media_type", m.MediaType, "attempt", m.Attempts)
	if ce := p.injected(ctx, log, m); ce != nil {
		return p.reject(ctx, log, m, ce)
	}
	begin := time.Now()
	res, err := p.run(ctx, m)
	var ce *clientError
	if errors.As(err, &ce) {
		return p.reject(ctx, log, m, ce)
	}
	if err != nil {
		return fmt.Errorf("process media %d: %w", m.ID, err)
	}
	return p.complete(ctx, log, m, res, begin)
}

// reject fails m for the client's bytes; the returned error wraps
// tasks.ErrClientInput, so the task is not retried (unless recording the
// failure failed: then it is, and the next attempt decides again).
func (p *Processor) reject(ctx context.Context, log *slog.Logger, m storage.Media, ce *clientError) error {
	if _, err := p.fail(ctx, m.ID, ce.code, ce.name(), ce.message); err != nil {
		return err
	}
	log.InfoContext(ctx, "media failed: the upload cannot be processed", "code", ce.code, "reason", ce.message)
	return fmt.Errorf("media %d: %w: %w", m.ID, ce, tasks.ErrClientInput)
}

// run processes m in a working directory of its own.
func (p *Processor) run(ctx context.Context, m storage.Media) (storage.MediaResult, error) {
	dir, err := os.MkdirTemp(p.TempDir, fmt.Sprintf("media-%d-*", m.ID))
	if err != nil {
		return storage.MediaResult{}, fmt.Errorf("make working directory: %w", err)
	}
	defer os.RemoveAll(dir)
	j := &job{media: m, dir: dir, original: filepath.Join(dir, "original")}
	if j.limit, err = p.limit(ctx, m); err != nil {
		return storage.MediaResult{}, err
	}
	if j.size, err = p.fetch(ctx, m, j.original); err != nil {
		return storage.MediaResult{}, err
	}
	if j.limit.Bytes > 0 && j.size > j.limit.Bytes {
		return storage.MediaResult{}, tooLarge("The file is %d bytes; the limit for %s is %d bytes.", j.size, m.Category, j.limit.Bytes)
	}
	switch m.Kind {
	case storage.MediaPhoto:
		return p.photo(ctx, j)
	case storage.MediaVideo, storage.MediaAnimatedGIF:
		return p.video(ctx, j)
	case storage.MediaSubtitle:
		return p.subtitles(ctx, j)
	}
	return storage.MediaResult{}, fmt.Errorf("media kind %q: %w", m.Kind, asynq.SkipRetry)
}

// limit is the uploader's limit for m's category.
func (p *Processor) limit(ctx context.Context, m storage.Media) (storage.MediaLimit, error) {
	elevated, err := p.Store.UserMediaElevated(ctx, m.OwnerID)
	if err != nil {
		return storage.MediaLimit{}, fmt.Errorf("load limits of uploader %d: %w", m.OwnerID, err)
	}
	return storage.MediaLimitFor(m.Category, elevated), nil
}

func (p *Processor) complete(ctx context.Context, log *slog.Logger, m storage.Media, res storage.MediaResult, begin time.Time) error {
	err := p.Store.CompleteMedia(ctx, m.ID, res, p.now())
	if errors.Is(err, storage.ErrConflict) {
		log.WarnContext(ctx, "media finished elsewhere", "err", err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("complete media %d: %w", m.ID, err)
	}
	log.InfoContext(ctx, "media processed", "width", res.Width, "height", res.Height, "duration_ms", res.DurationMS,
		"output", res.OutputKey, "seconds", time.Since(begin).Seconds())
	return nil
}

// fail marks media id failed and reports whether it did: media already
// final stay as they are. It runs even when ctx is done (the attempt was
// cancelled).
func (p *Processor) fail(ctx context.Context, id int64, code int, name, message string) (bool, error) {
	err := p.Store.FailMedia(context.WithoutCancel(ctx), id, code, name, message, p.now())
	if errors.Is(err, storage.ErrConflict) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("record failure of media %d: %w", id, err)
	}
	return true, nil
}

// FinalFailure is called once a task will not run again (it asked to skip
// retries, or they are used up): its media is marked failed with code 3,
// so finalized media always reach a final state. Media already final (a
// client error was recorded) stay as they are.
func (p *Processor) FinalFailure(ctx context.Context, t *asynq.Task, attempts int, err error) {
	if t.Type() != tasks.TypeMediaProcess {
		return
	}
	payload, perr := tasks.ParseMediaProcess(t)
	if perr != nil {
		return
	}
	msg := failedAfterRetries(payload.MediaID, attempts)
	failed, ferr := p.fail(ctx, payload.MediaID, storage.MediaErrorInternal, ErrorNameInternal, msg)
	if ferr != nil {
		logctx.OrDefault(p.Logger).ErrorContext(ctx, "mark media failed after its last attempt", "media_id", payload.MediaID, "err", ferr)
		return
	}
	if failed {
		logctx.OrDefault(p.Logger).ErrorContext(ctx, "media failed: processing gave up", "media_id", payload.MediaID, "attempts", attempts, "err", err)
	}
}
