package tasks

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
)

// TypeMediaProcess assembles a finalized upload's segments and processes
// the media (images: decode, check, normalise; video and animated GIFs:
// probe and transcode with ffmpeg). The task id is the media id.
const TypeMediaProcess = "media:process"

// MediaProcess is the payload of TypeMediaProcess.
type MediaProcess struct {
	MediaID int64 `json:"media_id"`
}

// ErrDeferred marks a run that did not start its work because the worker
// had no room for it (media slots, docs/media-upload.md): asynq puts the
// task back without counting a failed attempt (workers.NewServer).
var ErrDeferred = errors.New("deferred: no room for this task on the worker now")

// Video work budget (docs/media-upload.md, "Work budgets"): the defaults
// of what one video may cost to transcode, checked by the worker from
// ffprobe's figures before ffmpeg starts (AVIARY_MEDIA_VIDEO_MAX_PIXEL_RATE
// and AVIARY_MEDIA_VIDEO_MAX_PIXELS change them on a worker).
const (
	// MediaVideoMaxPixelRate caps width x height x frames per second:
	// 1920x1200 at 60 fps, the platform's largest recommended video.
	MediaVideoMaxPixelRate int64 = 1920 * 1200 * 60
	// MediaVideoMaxPixels caps width x height x frames over the whole
	// video: about 20 minutes of 1080p at 30 fps.
	MediaVideoMaxPixels int64 = 75_000_000_000
	// MediaVideoMinThroughput is the slowest transcode, in pixels per
	// second, a video's deadline allows for (a tenth of what one core
	// did when measured: docs/media-upload.md).
	MediaVideoMinThroughput int64 = 20_000_000
	// mediaTransferAllowance is the part of a task's timeout left for
	// assembling, downloading and storing files around the transcode.
	mediaTransferAllowance = 30 * time.Minute
)

// MediaTranscodeTimeout is how long transcoding a video of pixels (width
// x height x frames) may take: a minute, plus the pixels at
// MediaVideoMinThroughput.
func MediaTranscodeTimeout(pixels int64) time.Duration {
	return time.Minute + time.Duration(pixels/MediaVideoMinThroughput)*time.Second
}

// MediaTaskTimeout bounds one attempt: the transcode of a video at the
// default pixel budget, plus moving its files (1 h 34 min).
// (MediaTranscodeTimeout of MediaVideoMaxPixels, spelled out as a
// constant).
const MediaTaskTimeout = time.Minute + time.Duration(MediaVideoMaxPixels/MediaVideoMinThroughput)*time.Second + mediaTransferAllowance

// MediaMaxRetry is how many times a failed attempt is retried.
const MediaMaxRetry = 8

// NewMediaProcess builds the task for one finalized upload.
func NewMediaProcess(mediaID int64) (*asynq.Task, error) {
	payload, err := json.Marshal(MediaProcess{MediaID: mediaID})
	if err != nil {
		return nil, fmt.Errorf("encode media payload: %w", err)
	}
	return asynq.NewTask(TypeMediaProcess, payload,
		asynq.TaskID(MediaTaskID(mediaID)),
		asynq.Queue(QueueMedia),
		asynq.MaxRetry(MediaMaxRetry),
		asynq.Timeout(MediaTaskTimeout),
		asynq.Retention(24*time.Hour),
	), nil
}

// MediaTaskID is the asynq task id used for a media upload.
func MediaTaskID(mediaID int64) string {
	return fmt.Sprintf("media-%d", mediaID)
}

// ParseMediaProcess decodes a TypeMediaProcess payload.
func ParseMediaProcess(t *asynq.Task) (MediaProcess, error) {
	var p MediaProcess
	if err := decode(t, &p); err != nil {
		return p, err
	}
	if p.MediaID <= 0 {
		return p, fmt.Errorf("media payload without media id: %w", asynq.SkipRetry)
	}
	return p, nil
}
