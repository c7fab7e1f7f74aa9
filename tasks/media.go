package tasks

import (
	"encoding/json"
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

// MediaTaskTimeout bounds one attempt (a long video at its largest).
const MediaTaskTimeout = 3 * time.Hour

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
