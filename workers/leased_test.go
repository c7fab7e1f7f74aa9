package workers

import (
	"log/slog"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/workers/catalogs"
	"github.com/aviary-dev/aviary/workers/news"
	"github.com/aviary-dev/aviary/workers/sweep"
	"github.com/aviary-dev/aviary/workers/webhooks"
)

// TestNewMuxLeasesRescuedFamilies (issue 32): catalogs:check_images,
// news:refresh and webhooks:replay run under their task's lease like
// media and compliance, so a killed run is rescued (sweep.Rescue) and a
// rescue and the original never run at once. Run by a real asynq server
// with PostgreSQL's leases: while another live run holds a task's logical
// id, a run of the task (its own id, or a rescue's derived one) ends at
// once without reaching its handler (here without a store: reached, it
// would fail), and completes.
func TestNewMuxLeasesRescuedFamilies(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	addr, rdb := storagetest.RedisDB(t)
	opt := asynq.RedisClientOpt{Addr: addr, DB: rdb}
	client, inspector := asynq.NewClient(opt), asynq.NewInspector(opt)
	t.Cleanup(func() { client.Close(); inspector.Close() })
	log := slog.New(slog.DiscardHandler)
	mux := NewMux(Deps{Catalogs: &catalogs.Processor{}, News: &news.Refresher{}, WebhookReplay: &webhooks.Replayer{},
		Hold: &sweep.Hold{Leases: db, Logger: log}, Logger: log})
	srv := asynq.NewServer(opt, asynq.Config{Concurrency: 3, LogLevel: asynq.FatalLevel, TaskCheckInterval: 20 * time.Millisecond,
		Queues: map[string]int{tasks.QueueCatalogs: 1, tasks.QueueInsights: 1, tasks.QueueWebhooks: 1}})
	if err := srv.Start(mux); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)

	catalog, err := tasks.NewCatalogImages("k1", tasks.CatalogImages{CatalogID: "c", ProductID: "p", Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	replay, err := tasks.NewWebhookReplay(7)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		task         *asynq.Task
		queue, id    string
		runAsRescued bool
	}{
		{catalog, tasks.QueueCatalogs, tasks.CatalogImagesTaskID("k1", 1), false},
		{tasks.NewNewsRefresh(), tasks.QueueInsights, tasks.NewsRefreshTaskID, false},
		{replay, tasks.QueueWebhooks, tasks.WebhookReplayTaskID(7), true},
	} {
		// Another live run holds the logical id.
		if ok, err := db.ClaimTaskLease(t.Context(), c.id, "elsewhere:1:live", time.Minute); err != nil || !ok {
			t.Fatalf("claim %s: %v %v", c.id, ok, err)
		}
		runID := c.id
		if c.runAsRescued {
			runID = sweep.RescueTaskID(c.id, "elsewhere:1:dead")
		}
		if _, err := client.Enqueue(asynq.NewTask(c.task.Type(), c.task.Payload()), asynq.TaskID(runID), asynq.Queue(c.queue),
			asynq.MaxRetry(0), asynq.Retention(time.Hour)); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			info, err := inspector.GetTaskInfo(c.queue, runID)
			if err == nil && info.State == asynq.TaskStateCompleted {
				break
			}
			if err == nil && info.State == asynq.TaskStateArchived {
				t.Fatalf("%s (%s) reached its handler while its lease was held: %s", c.task.Type(), runID, info.LastErr)
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s (%s) did not complete: %v %v", c.task.Type(), runID, info, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if held, err := db.TaskLeaseHeld(t.Context(), c.id); err != nil || !held {
			t.Errorf("%s: the other run's lease is gone (%v %v)", c.id, held, err)
		}
	}
}
