package webhooks_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/workers/sweep"
	"github.com/aviary-dev/aviary/workers/webhooks"
)

// replayFixture is an app with two webhooks and a window an hour back.
type replayFixture struct {
	db       *postgres.DB
	pool     *pgxpool.Pool
	app      storage.App
	hook     storage.Webhook
	empty    storage.Webhook
	from, to time.Time
}

func newReplayFixture(t *testing.T) *replayFixture {
	t.Helper()
	db, pool := storagetest.NewDBWithPool(t)
	f := &replayFixture{db: db, pool: pool, app: factory.App(t, db, nil)}
	hook := func(url string) storage.Webhook {
		w, err := db.CreateWebhook(t.Context(), storage.WebhookCreate{AppID: f.app.ID, URL: url, CheckedAt: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	f.hook, f.empty = hook("https://a.example/hook"), hook("https://a.example/empty")
	f.from = time.Now().UTC().Truncate(time.Minute).Add(-time.Hour)
	f.to = f.from.Add(10 * time.Minute)
	return f
}

func (f *replayFixture) job(t *testing.T, hook storage.Webhook) storage.WebhookReplayJob {
	t.Helper()
	j, err := f.db.CreateWebhookReplay(t.Context(), storage.NewWebhookReplay{AppID: f.app.ID, WebhookID: hook.ID, From: f.from, To: f.to})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// copies are the (event, kind) of a job's deliveries in queue order.
func (f *replayFixture) copies(t *testing.T, jobID int64) [][2]any {
	t.Helper()
	rows, err := f.pool.Query(t.Context(), `SELECT event_seq, kind FROM webhook_deliveries WHERE replay_job_id = $1 ORDER BY id`, jobID)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) ([2]any, error) {
		var seq int64
		var kind string
		err := row.Scan(&seq, &kind)
		return [2]any{seq, kind}, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func runReplay(t *testing.T, r *webhooks.Replayer, jobID int64) error {
	t.Helper()
	task, err := tasks.NewWebhookReplay(jobID)
	if err != nil {
		t.Fatal(err)
	}
	return r.ProcessTask(t.Context(), task)
}

// TestReplayHandler: a run copies exactly the window's live post
// deliveries of the webhook, in event order, then one status; the job
// runs with their count; a second run adds nothing; an empty window still
// queues the status; a gone job is no error; a final failure ends a queued
// job incomplete.
func TestReplayHandler(t *testing.T) {
	t.Parallel()
	f := newReplayFixture(t)
	r := &webhooks.Replayer{Store: f.db}
	add := func(hook storage.Webhook, seq int64, at time.Time, state string) {
		factory.WebhookDelivery(t, f.db, hook, &factory.WebhookDeliveryOpts{EventSeq: seq, EventAt: at, State: state})
	}
	add(f.hook, 10, f.from.Add(-time.Millisecond), storage.DeliveryDelivered) // before
	add(f.hook, 14, f.from.Add(9*time.Minute), storage.DeliveryPending)
	add(f.hook, 12, f.from, storage.DeliveryDelivered)
	add(f.hook, 13, f.from.Add(time.Minute), storage.DeliveryDead)
	add(f.hook, 15, f.to, storage.DeliveryDelivered) // after
	factory.WebhookDelivery(t, f.db, f.hook, &factory.WebhookDeliveryOpts{Kind: storage.DeliveryReplayStatus, EventAt: f.from.Add(time.Minute)})

	job := f.job(t, f.hook)
	if err := runReplay(t, r, job.ID); err != nil {
		t.Fatal(err)
	}
	want := [][2]any{{int64(12), "post"}, {int64(13), "post"}, {int64(14), "post"}, {int64(0), "replay_status"}}
	if got := f.copies(t, job.ID); !slices.Equal(got, want) {
		t.Fatalf("copies %v, want %v", got, want)
	}
	j, err := f.db.WebhookReplay(t.Context(), job.ID)
	if err != nil || j.State != storage.ReplayRunning || j.Events != 3 {
		t.Fatalf("job after the run: %+v, %v", j, err)
	}
	if err := runReplay(t, r, job.ID); err != nil {
		t.Fatal(err)
	}
	if got := f.copies(t, job.ID); !slices.Equal(got, want) {
		t.Fatalf("copies after a second run %v, want %v", got, want)
	}

	empty := f.job(t, f.empty)
	if err := runReplay(t, r, empty.ID); err != nil {
		t.Fatal(err)
	}
	if got := f.copies(t, empty.ID); !slices.Equal(got, [][2]any{{int64(0), "replay_status"}}) {
		t.Fatalf("empty window: %v", got)
	}
	if j, err := f.db.WebhookReplay(t.Context(), empty.ID); err != nil || j.State != storage.ReplayRunning || j.Events != 0 {
		t.Fatalf("empty job: %+v, %v", j, err)
	}

	if err := runReplay(t, r, 12345); err != nil {
		t.Fatalf("a gone job: %v", err)
	}
	if err := r.ProcessTask(t.Context(), asynq.NewTask(tasks.TypeWebhookReplay, []byte(`{}`))); !errors.Is(err, asynq.SkipRetry) {
		t.Fatalf("payload without a job: %v", err)
	}

	// The webhook's queued job whose task failed for good ends incomplete.
	if _, err := f.pool.Exec(t.Context(), `UPDATE webhook_replay_jobs SET state = 'complete' WHERE id = $1`, job.ID); err != nil {
		t.Fatal(err)
	}
	failed := f.job(t, f.hook)
	task, _ := tasks.NewWebhookReplay(failed.ID)
	r.FinalFailure(t.Context(), task, tasks.WebhookReplayMaxRetry+1, errors.New("database down"))
	if j, err := f.db.WebhookReplay(t.Context(), failed.ID); err != nil || j.State != storage.ReplayIncomplete || j.FinishedAt == nil {
		t.Fatalf("after a final failure: %+v, %v", j, err)
	}
	if got := f.copies(t, failed.ID); len(got) != 0 {
		t.Fatalf("a failed job queued %v", got)
	}
}

// TestReplaySweep: a tick enqueues the task of a job still queued past
// the grace (swept), leaves a newer one and a running one alone, and ends
// a job whose task was archived incomplete.
func TestReplaySweep(t *testing.T) {
	t.Parallel()
	f := newReplayFixture(t)
	third, err := f.db.CreateWebhook(t.Context(), storage.WebhookCreate{AppID: f.app.ID, URL: "https://a.example/third", CheckedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	queued := f.job(t, f.hook)
	archived := f.job(t, f.empty)
	running := f.job(t, third)
	if err := runReplay(t, &webhooks.Replayer{Store: f.db}, running.ID); err != nil {
		t.Fatal(err)
	}

	addr, n := storagetest.RedisDB(t)
	opt := asynq.RedisClientOpt{Addr: addr, DB: n}
	client := asynq.NewClient(opt)
	t.Cleanup(func() { client.Close() })
	inspector := asynq.NewInspector(opt)
	t.Cleanup(func() { inspector.Close() })
	task, _ := tasks.NewWebhookReplay(archived.ID)
	if _, err := client.Enqueue(task); err != nil {
		t.Fatal(err)
	}
	if err := inspector.ArchiveTask(tasks.QueueWebhooks, tasks.WebhookReplayTaskID(archived.ID)); err != nil {
		t.Fatal(err)
	}

	now := time.Now()
	s := &sweep.Sweeper[storage.WebhookReplayJob]{Source: &webhooks.ReplaySweep{Store: f.db}, Queue: client, Inspector: inspector,
		Clock: func() time.Time { return now }}
	// Within the grace: nothing yet.
	if err := s.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := inspector.GetTaskInfo(tasks.QueueWebhooks, tasks.WebhookReplayTaskID(queued.ID)); !errors.Is(err, asynq.ErrTaskNotFound) {
		t.Fatalf("task within the grace: %v", err)
	}
	now = now.Add(webhooks.ReplayGrace + time.Second)
	if err := s.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	info, err := inspector.GetTaskInfo(tasks.QueueWebhooks, tasks.WebhookReplayTaskID(queued.ID))
	if err != nil || info.Type != tasks.TypeWebhookReplay || info.State != asynq.TaskStatePending {
		t.Fatalf("task of the queued job: %+v, %v", info, err)
	}
	if j, err := f.db.WebhookReplay(t.Context(), archived.ID); err != nil || j.State != storage.ReplayIncomplete {
		t.Fatalf("job with an archived task: %+v, %v", j, err)
	}
	if _, err := inspector.GetTaskInfo(tasks.QueueWebhooks, tasks.WebhookReplayTaskID(running.ID)); !errors.Is(err, asynq.ErrTaskNotFound) {
		t.Fatalf("task of the running job: %v", err)
	}
	var swept *time.Time
	if err := f.pool.QueryRow(context.Background(), `SELECT swept_at FROM webhook_replay_jobs WHERE id = $1`, queued.ID).Scan(&swept); err != nil ||
		swept == nil {
		t.Fatalf("swept_at of the queued job: %v, %v", swept, err)
	}
}
