package workers

import (
	"time"

	"context"
	"log/slog"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/workers/catalogs"
	"github.com/aviary-dev/aviary/workers/compliance"
	"github.com/aviary-dev/aviary/workers/insights"
	"github.com/aviary-dev/aviary/workers/media"
	"github.com/aviary-dev/aviary/workers/news"
	"github.com/aviary-dev/aviary/workers/sweep"
	"github.com/aviary-dev/aviary/workers/webhooks"
)

// FinalFailer is implemented by handlers that settle their record once a
// task will not run again (it asked to skip retries, or they are used up);
// attempts counts the runs, including the last.
type FinalFailer interface {
	FinalFailure(ctx context.Context, t *asynq.Task, attempts int, err error)
}

// Deps are the task handlers a worker serves, plus what the middleware
// needs. A nil handler's task type is not registered.
type Deps struct {
	Compliance *compliance.Processor
	Media      *media.Processor
	// Catalogs checks product images (catalogs:check_images).
	Catalogs   *catalogs.Processor
	DoNotReach *sweep.BatchProcessor
	// Audiences applies custom audience users batches.
	Audiences *sweep.BatchProcessor
	// Insights applies the insights change log to the aggregates.
	Insights *insights.Applier
	// News builds and refreshes the news stories (news:refresh).
	News *news.Refresher
	// WebhookReplay starts webhook replay jobs (webhooks:replay).
	WebhookReplay *webhooks.Replayer
	// Hold, when set, makes every run of a task its sweeper recovers
	// (compliance jobs, media, audience and do-not-reach batches, catalog
	// image checks, news refreshes, webhook replays) hold the task's lease,
	// so the sweeper never enqueues it twice and a killed run is rescued
	// (docs/outages.md).
	Hold   *sweep.Hold
	Logger *slog.Logger
	// Jobs counts the runs per queue and minute for the console's charts
	// (storage/opsredis.Recorder); nil counts none.
	Jobs JobCounter
	// Registerer receives the task metrics (nil: a private registry).
	Registerer prometheus.Registerer
}

// JobCounter counts one task run of queue that ended at (failed: with an
// error), as asynq's processed and failed counts do.
type JobCounter interface {
	Job(queue string, failed bool, at time.Time)
}

// route is one task type and its handler.
type route struct {
	taskType string
	handler  asynq.Handler
}

// leased are the task types whose runs hold their task's lease (Deps.Hold):
// those a sweeper enqueues again when their record looks stuck, so a
// killed worker's run is rescued within seconds (sweep.Rescue) rather
// than after asynq's own recovery (60-120 s). Each handler's final write
// is conditional on its record's state, so a rescue and the original run
// asynq hands back later never both apply: an image check records only a
// version still pending images, a replay job starts only while queued, and
// a news refresh is an upsert of the same stories (docs/outages.md).
var leased = map[string]bool{tasks.TypeComplianceProcess: true, tasks.TypeMediaProcess: true, tasks.TypeAudienceApplyBatch: true,
	tasks.TypeDoNotReachApply: true, tasks.TypeCatalogImages: true, tasks.TypeNewsRefresh: true, tasks.TypeWebhookReplay: true}

// routes lists every task type a worker serves, in one place.
func (d Deps) routes() []route {
	var rs []route
	if d.Compliance != nil {
		rs = append(rs, route{tasks.TypeComplianceProcess, d.Compliance})
	}
	if d.Media != nil {
		rs = append(rs, route{tasks.TypeMediaProcess, d.Media})
	}
	if d.Catalogs != nil {
		rs = append(rs, route{tasks.TypeCatalogImages, d.Catalogs})
	}
	if d.DoNotReach != nil {
		rs = append(rs, route{tasks.TypeDoNotReachApply, d.DoNotReach})
	}
	if d.Audiences != nil {
		rs = append(rs, route{tasks.TypeAudienceApplyBatch, d.Audiences})
	}
	if d.Insights != nil {
		rs = append(rs, route{tasks.TypeInsightsApply, d.Insights})
	}
	if d.News != nil {
		rs = append(rs, route{tasks.TypeNewsRefresh, d.News})
	}
	if d.WebhookReplay != nil {
		rs = append(rs, route{tasks.TypeWebhookReplay, d.WebhookReplay})
	}
	return rs
}

// NewMux registers every task type on one asynq.ServeMux, each behind the
// middleware: panics become errors, every run is logged and counted, and a
// handler that implements FinalFailer hears of its task's final failure.
func NewMux(d Deps) *asynq.ServeMux {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Registerer == nil {
		d.Registerer = prometheus.NewRegistry()
	}
	m := newTaskMetrics(d.Registerer)
	mux := asynq.NewServeMux()
	for _, r := range d.routes() {
		var h asynq.Handler = recoverPanics(r.handler)
		if leased[r.taskType] && d.Hold != nil {
			h = d.Hold.Wrap(h)
		}
		h = finalFailure(r.handler, h)
		mux.Handle(r.taskType, observe(d.Logger, m, d.Jobs, h))
	}
	return mux
}
