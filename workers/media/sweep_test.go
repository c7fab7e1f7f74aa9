package media

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/workers/sweep"
	"github.com/aviary-dev/aviary/workers/sweep/sweeptest"
)

// sweeper is the media sweeper at e.now on a Redis database of the test's,
// with its queue client and inspector.
func (e *env) sweeper(t *testing.T) (*sweep.Sweeper[storage.Media], *asynq.Client, *asynq.Inspector) {
	t.Helper()
	addr, rdb := storagetest.RedisDB(t)
	opt := asynq.RedisClientOpt{Addr: addr, DB: rdb}
	client := asynq.NewClient(opt)
	t.Cleanup(func() { client.Close() })
	inspector := asynq.NewInspector(opt)
	t.Cleanup(func() { inspector.Close() })
	return &sweep.Sweeper[storage.Media]{Source: &Sweep{Store: e.db, Blobs: e.blobs, Logger: e.log},
		Queue: client, Inspector: inspector, Logger: e.log, Clock: func() time.Time { return e.now }}, client, inspector
}

// TestSweep: one tick enqueues the task of finalized media that has none,
// removes expired uploads (records and segment objects), fails media whose
// task was archived, and leaves everything else alone.
func TestSweep(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s, client, inspector := e.sweeper(t)

	data := []byte("0123456789")
	pending := e.record(t, upload{mediaType: "image/png", data: data, finalize: true})
	archived := e.record(t, upload{mediaType: "image/png", data: data, finalize: true})
	archiveTask(t, client, inspector, archived.ID)
	expired := e.record(t, upload{mediaType: "video/mp4", data: data, sizes: []int{4, 6}, retried: []int{0}, expiresAt: e.now.Add(-time.Minute)})
	expiredKeys := e.segmentKeys(t, expired.ID)
	open := e.record(t, upload{mediaType: "video/mp4", data: data, expiresAt: e.now.Add(time.Minute)})
	openKeys := e.segmentKeys(t, open.ID)
	done := e.record(t, upload{mediaType: "image/png", data: encodeImage(t, "png", 2, 2), finalize: true})
	p, _ := e.processor(t, nil)
	if err := process(t, p, done.ID); err != nil {
		t.Fatal(err)
	}

	if err := s.Tick(t.Context()); err != nil {
		t.Fatalf("Tick: %v", err)
	}

	info, err := inspector.GetTaskInfo(tasks.QueueMedia, tasks.MediaTaskID(pending.ID))
	if err != nil {
		t.Fatalf("task of pending media: %v", err)
	}
	if info.Type != tasks.TypeMediaProcess || info.State != asynq.TaskStatePending || string(info.Payload) != fmt.Sprintf(`{"media_id":%d}`, pending.ID) {
		t.Errorf("task = %s %v %s", info.Type, info.State, info.Payload)
	}
	if m := e.load(t, pending.ID); m.SweptAt == nil || !m.SweptAt.Equal(e.now) {
		t.Errorf("pending media swept_at = %v, want %v", m.SweptAt, e.now)
	}
	if m := e.load(t, archived.ID); m.State != storage.MediaFailed || m.ErrorCode != storage.MediaErrorInternal || m.ErrorName != ErrorNameInternal {
		t.Errorf("media with an archived task = %s %d %s, want failed 3 InternalError", m.State, m.ErrorCode, m.ErrorName)
	}
	if _, err := e.db.Media(t.Context(), expired.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("expired upload: Media = %v, want storage.ErrNotFound", err)
	}
	if len(expiredKeys) != 3 {
		t.Errorf("expired upload had %d segment copies, want 3", len(expiredKeys))
	}
	for _, k := range expiredKeys {
		e.wantNoObject(t, k)
	}
	if m := e.load(t, open.ID); m.State != storage.MediaUploading || len(e.segmentKeys(t, open.ID)) != len(openKeys) {
		t.Errorf("open upload = %s with %d segments, want untouched", m.State, len(e.segmentKeys(t, open.ID)))
	}
	for _, k := range openKeys {
		if _, err := e.blobs.Stat(t.Context(), k); err != nil {
			t.Errorf("segment of the open upload: %v", err)
		}
	}
	for _, id := range []int64{open.ID, done.ID} {
		if _, err := inspector.GetTaskInfo(tasks.QueueMedia, tasks.MediaTaskID(id)); !errors.Is(err, asynq.ErrTaskNotFound) {
			t.Errorf("media %d got a task: %v", id, err)
		}
	}
}

// archiveTask enqueues the task of media id and archives it, as asynq does
// when its retries are used up.
func archiveTask(t *testing.T, client *asynq.Client, inspector *asynq.Inspector, id int64) {
	t.Helper()
	task, err := tasks.NewMediaProcess(id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Enqueue(task); err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	if err := inspector.ArchiveTask(tasks.QueueMedia, tasks.MediaTaskID(id)); err != nil {
		t.Fatalf("ArchiveTask: %v", err)
	}
}

// TestSweepLeavesMediaItsRunHolds: Redis emptied while a video is being
// processed no longer makes the sweeper start a second run; a killed run's
// media is enqueued again once its lease lapses.
func TestSweepLeavesMediaItsRunHolds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s, _, inspector := e.sweeper(t)
	s.Leases = e.db
	m := e.record(t, upload{mediaType: "image/png", data: []byte("0123456789"), finalize: true})
	sweeptest.HeldWork(t, e.db, tasks.MediaTaskID(m.ID), func() {
		if err := s.Tick(t.Context()); err != nil {
			t.Fatalf("Tick: %v", err)
		}
	}, func() bool {
		_, err := inspector.GetTaskInfo(tasks.QueueMedia, tasks.MediaTaskID(m.ID))
		return err == nil
	})
}
