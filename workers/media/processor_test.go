package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/tasks"
)

func TestProcessSubtitles(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srt := "1\n00:00:01,000 --> 00:00:04,000\nHello, wörld\n\n2\n00:00:05,000 --> 00:00:06,500\nBye\n"
	vtt := "\xef\xbb\xbfWEBVTT\n\n00:01.000 --> 00:04.000 align:start\n- Hi\n"
	tests := []struct {
		name      string
		mediaType string
		data      string
		wantExt   string
		wantMsg   string // failed InvalidMedia with this message
	}{
		{name: "srt", mediaType: "text/srt", data: srt, wantExt: "srt"},
		{name: "vtt", mediaType: "text/vtt", data: vtt, wantExt: "vtt"},
		{name: "vtt without header", mediaType: "text/vtt", data: srt, wantMsg: "A text/vtt file must start with WEBVTT."},
		{name: "not utf-8", mediaType: "text/srt", data: "1\n00:00:01,000 --> 00:00:02,000\n\xff\xfe caf\xe9\n", wantMsg: "not UTF-8 text (line 3)"},
		{name: "no cue timing", mediaType: "text/srt", data: "just some words\n", wantMsg: "no cue timings"},
		{name: "endless line", mediaType: "text/srt", data: strings.Repeat("a", maxSubtitleLine+1), wantMsg: "Line 1 is longer than 65536 bytes."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := e.record(t, upload{mediaType: tc.mediaType, data: []byte(tc.data), finalize: true})
			p, _ := e.processor(t, nil)
			err := process(t, p, m.ID)
			if tc.wantMsg != "" {
				e.wantFailed(t, err, m.ID, storage.MediaErrorInvalidMedia, ErrorNameInvalidMedia, tc.wantMsg)
				return
			}
			if err != nil {
				t.Fatalf("ProcessTask: %v", err)
			}
			got := e.load(t, m.ID)
			key := storage.MediaOutputKey(m.ID, tc.wantExt)
			if got.State != storage.MediaSucceeded || got.OutputKey != key || got.OutputType != tc.mediaType || got.Kind != storage.MediaSubtitle {
				t.Fatalf("media = %s %s %s %s", got.State, got.Kind, got.OutputKey, got.OutputType)
			}
			if stored, ctype := e.object(t, key); string(stored) != tc.data || ctype != tc.mediaType {
				t.Errorf("stored %q (%s), want the upload as is", stored, ctype)
			}
		})
	}
}

// TestProcessTaskStates: tasks for media that cannot be processed end
// without a retry or change nothing.
func TestProcessTaskStates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p, _ := e.processor(t, nil)
	done := e.record(t, upload{mediaType: "image/png", data: encodeImage(t, "png", 4, 4), finalize: true})
	if err := process(t, p, done.ID); err != nil {
		t.Fatal(err)
	}
	uploading := e.record(t, upload{mediaType: "image/png", data: []byte("abc")})
	tests := []struct {
		name      string
		task      *asynq.Task
		wantSkip  bool
		id        int64
		wantState storage.MediaState
	}{
		{name: "already succeeded", task: mediaTask(t, done.ID), id: done.ID, wantState: storage.MediaSucceeded},
		{name: "still uploading", task: mediaTask(t, uploading.ID), id: uploading.ID, wantState: storage.MediaUploading},
		{name: "unknown media", task: mediaTask(t, 999999), wantSkip: true},
		{name: "bad payload", task: asynq.NewTask(tasks.TypeMediaProcess, []byte(`{"media_id":"x"}`)), wantSkip: true},
		{name: "no media id", task: asynq.NewTask(tasks.TypeMediaProcess, []byte(`{}`)), wantSkip: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := p.ProcessTask(t.Context(), tc.task)
			if tc.wantSkip != errors.Is(err, asynq.SkipRetry) || (!tc.wantSkip && err != nil) {
				t.Fatalf("ProcessTask = %v, want skip-retry %v", err, tc.wantSkip)
			}
			if tc.id != 0 {
				if got := e.load(t, tc.id); got.State != tc.wantState || got.Attempts > 1 {
					t.Errorf("media is %s after %d attempts, want %s untouched", got.State, got.Attempts, tc.wantState)
				}
			}
		})
	}
}

func mediaTask(t *testing.T, id int64) *asynq.Task {
	t.Helper()
	task, err := tasks.NewMediaProcess(id)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// TestFinalFailure: when the last attempt fails, media in progress fail
// with code 3; media already final keep their result.
func TestFinalFailure(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p, _ := e.processor(t, nil)
	running := e.record(t, upload{mediaType: "video/mp4", data: []byte("abc"), finalize: true})
	if _, err := e.db.StartMediaProcessing(t.Context(), running.ID, e.now); err != nil {
		t.Fatal(err)
	}
	pending := e.record(t, upload{mediaType: "video/mp4", data: []byte("abc"), finalize: true})
	rejected := e.record(t, upload{mediaType: "image/png", data: []byte("abc"), finalize: true})
	rejectErr := process(t, p, rejected.ID)
	done := e.record(t, upload{mediaType: "image/png", data: encodeImage(t, "png", 4, 4), finalize: true})
	if err := process(t, p, done.ID); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		task     *asynq.Task
		err      error
		id       int64
		wantCode int
		wantMsg  string
	}{
		{"in progress", mediaTask(t, running.ID), errors.New("disk full"), running.ID, storage.MediaErrorInternal,
			fmt.Sprintf("Processing failed after 9 attempts. The operator can find the cause in the worker logs (media %d).", running.ID)},
		{"pending", mediaTask(t, pending.ID), errors.New("disk full"), pending.ID, storage.MediaErrorInternal, "after 9 attempts"},
		{"client error stays", mediaTask(t, rejected.ID), rejectErr, rejected.ID, storage.MediaErrorInvalidMedia, "not a PNG image"},
		{"succeeded stays", mediaTask(t, done.ID), errors.New("late"), done.ID, 0, ""},
		{"other task type", asynq.NewTask("other:type", []byte(`{"media_id":1}`)), errors.New("x"), 0, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p.FinalFailure(t.Context(), tc.task, 9, tc.err)
			if tc.id == 0 {
				return
			}
			m := e.load(t, tc.id)
			if tc.wantCode == 0 {
				if m.State != storage.MediaSucceeded || m.ErrorCode != 0 {
					t.Errorf("media is %s code %d, want succeeded", m.State, m.ErrorCode)
				}
				return
			}
			wantName := ErrorNameInternal
			if tc.wantCode == storage.MediaErrorInvalidMedia {
				wantName = ErrorNameInvalidMedia
			}
			if m.State != storage.MediaFailed || m.ErrorCode != tc.wantCode || m.ErrorName != wantName || !strings.Contains(m.ErrorMessage, tc.wantMsg) {
				t.Errorf("media = %s %d %s %q, want failed %d %s %q", m.State, m.ErrorCode, m.ErrorName, m.ErrorMessage, tc.wantCode, wantName, tc.wantMsg)
			}
		})
	}
}

// TestCancelKillsFFmpeg: cancelling the task's context (shutdown, timeout)
// kills a running transcode at once; the media stays in progress for the
// retry and the working directory is removed.
func TestCancelKillsFFmpeg(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "ffmpeg.pid")
	// -re reads the 150 s input at its native rate: a transcode of 150 s.
	script := fmt.Sprintf("#!/bin/sh\necho $$ > %q\nexec ffmpeg -re \"$@\"\n", pidFile)
	wrapper := filepath.Join(dir, "slow-ffmpeg")
	if err := os.WriteFile(wrapper, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	m := e.record(t, upload{mediaType: "video/mp4", data: longVideo(t), finalize: true})
	p, _ := e.processor(t, nil)
	p.FFmpeg = wrapper
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	result := make(chan error, 1)
	start := time.Now()
	go func() { result <- p.ProcessTask(ctx, mediaTask(t, m.ID)) }()
	pid := waitPID(t, pidFile, result)
	time.Sleep(500 * time.Millisecond) // let the transcode get going
	cancel()
	var err error
	select {
	case err = <-result:
	case <-time.After(10 * time.Second):
		t.Fatal("ProcessTask did not return within 10 s of the cancel")
	}
	if elapsed := time.Since(start); elapsed > 60*time.Second {
		t.Errorf("ProcessTask took %v: the transcode was not stopped", elapsed)
	}
	if !errors.Is(err, context.Canceled) || errors.Is(err, tasks.ErrClientInput) {
		t.Errorf("ProcessTask = %v, want a retryable error wrapping context.Canceled", err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("ffmpeg (pid %d) still exists after the cancel: kill -0 = %v", pid, err)
	}
	if got := e.load(t, m.ID); got.State != storage.MediaInProgress {
		t.Errorf("media is %s, want in_progress (for the retry)", got.State)
	}
	if left, _ := os.ReadDir(p.TempDir); len(left) != 0 {
		t.Errorf("working files left: %v", left)
	}
	e.wantNoObject(t, storage.MediaOutputKey(m.ID, "mp4"))
}

// waitPID waits for the wrapper to write ffmpeg's pid.
func waitPID(t *testing.T, path string, result <-chan error) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-result:
			t.Fatalf("ProcessTask ended before ffmpeg ran: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
		if b, err := os.ReadFile(path); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			return readPID(t, path)
		}
	}
	t.Fatal("ffmpeg did not start within 30 s")
	return 0
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b)))
	if err != nil {
		t.Fatalf("pid file %q: %v", b, err)
	}
	return pid
}

// TestFFmpegStoppedBySignalIsRetried: ffmpeg ending with the status of a
// stop signal (255), e.g. a service manager stopping the worker's group, is
// not the upload's fault: the task is retried and the media stays in
// progress; a plain refusal (status 1) fails it with code 1.
func TestFFmpegStoppedBySignalIsRetried(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	video := shortVideo(t)
	for _, tc := range []struct {
		status     int
		wantFailed bool
	}{
		{255, false},
		{1, true},
	} {
		t.Run(fmt.Sprintf("exit %d", tc.status), func(t *testing.T) {
			wrapper := filepath.Join(t.TempDir(), "ffmpeg")
			if err := os.WriteFile(wrapper, fmt.Appendf(nil, "#!/bin/sh\nexit %d\n", tc.status), 0o700); err != nil {
				t.Fatal(err)
			}
			m := e.record(t, upload{mediaType: "video/mp4", data: video, finalize: true})
			p, _ := e.processor(t, nil)
			p.FFmpeg = wrapper
			err := p.ProcessTask(t.Context(), mediaTask(t, m.ID))
			if tc.wantFailed {
				e.wantFailed(t, err, m.ID, storage.MediaErrorInvalidMedia, ErrorNameInvalidMedia, "could not be decoded")
				return
			}
			if err == nil || errors.Is(err, tasks.ErrClientInput) {
				t.Errorf("ProcessTask = %v, want a retryable error", err)
			}
			if got := e.load(t, m.ID); got.State != storage.MediaInProgress {
				t.Errorf("media is %s, want in_progress (for the retry)", got.State)
			}
		})
	}
}
