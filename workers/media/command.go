package media

import (
	"context"
	"os/exec"
	"time"
)

// ffmpegWaitDelay bounds how long a killed ffmpeg may hold its pipes open.
const ffmpegWaitDelay = 5 * time.Second

// command is an ffmpeg/ffprobe run tied to ctx (cancelled: killed) and, on
// Linux, to the worker process: if the worker dies (SIGKILL, OOM), the
// kernel kills the child too instead of leaving it transcoding as an
// orphan for a task that asynq will run again elsewhere.
func command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = ffmpegWaitDelay
	dieWithParent(cmd)
	return cmd
}
