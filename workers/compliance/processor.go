package compliance

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob"
	"github.com/aviary-dev/aviary/tasks"
)

// Processor handles TypeComplianceProcess tasks: it streams the uploaded
// ids, checks each against the platform's records and writes the result
// file in one atomic Put, then completes the job. A retried attempt redoes
// the whole file and produces the same result.
type Processor struct {
	Store          Store
	Blobs          blob.Store
	Logger         *slog.Logger
	Clock          func() time.Time
	BatchSize      int           // ids per database lookup (default 10000)
	Parallel       int           // lookups in flight per job (default 2)
	HeartbeatEvery time.Duration // progress write interval (default 2 s)
	// Next, when set, is handed the next uploaded job of a job's app and
	// type as soon as the job completes or fails (the uploads sweeper's
	// SweepOne), so the waiting job starts without waiting for a tick.
	// Nil, or a failure, leaves it to the sweeper's ticks.
	Next Starter
}

// Starter enqueues a job whose turn may have come (*sweep.Sweeper's
// SweepOne).
type Starter interface {
	SweepOne(ctx context.Context, job storage.ComplianceJob) error
}

// startNext hands the job waiting behind finished (same app and type) to
// Next. It runs even when ctx is done (the attempt ended).
func (c *Processor) startNext(ctx context.Context, finished storage.ComplianceJob) {
	if c.Next == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	next, err := c.Store.NextComplianceJob(ctx, finished.AppID, finished.Type)
	if errors.Is(err, storage.ErrNotFound) {
		return
	}
	if err == nil {
		err = c.Next.SweepOne(ctx, next)
	}
	if err != nil {
		c.Logger.WarnContext(ctx, "start the next compliance job; the sweeper will", "after_job_id", finished.ID, "err", err)
	}
}

func (c *Processor) now() time.Time {
	if c.Clock != nil {
		return c.Clock().UTC()
	}
	return time.Now().UTC()
}

// ProcessTask implements asynq.Handler.
func (c *Processor) ProcessTask(ctx context.Context, t *asynq.Task) error {
	p, err := tasks.ParseComplianceProcess(t)
	if err != nil {
		return err
	}
	job, started, err := c.Store.StartComplianceJob(ctx, p.JobID, c.now())
	if errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("compliance job %d does not exist: %w", p.JobID, asynq.SkipRetry)
	}
	if errors.Is(err, storage.ErrJobBusy) {
		return c.wait(ctx, p.JobID)
	}
	if err != nil {
		return fmt.Errorf("start compliance job %d: %w", p.JobID, err)
	}
	if !started {
		c.Logger.InfoContext(ctx, "compliance job already finished", "job_id", job.ID, "status", job.Status)
		return nil
	}
	log := c.Logger.With("job_id", job.ID, "type", job.Type, "attempt", job.Attempts)
	begin := time.Now()
	progress, err := c.storedResult(ctx, job)
	if errors.Is(err, blob.ErrNotFound) {
		log.InfoContext(ctx, "compliance job started")
		progress, err = c.process(ctx, job)
	}
	if errors.Is(err, errUnreadable) || errors.Is(err, errNoUpload) {
		c.fail(ctx, job, reasonFor(err))
		log.InfoContext(ctx, "compliance job failed: the upload cannot be processed", "reason", reasonFor(err))
		return fmt.Errorf("compliance job %d: %w: %w", job.ID, err, tasks.ErrClientInput)
	}
	if err != nil {
		return fmt.Errorf("process compliance job %d: %w", job.ID, err)
	}
	return c.complete(ctx, log, job, progress, begin)
}

// wait ends a task whose job may not start yet (another job of its app and
// type goes first): the job goes back to waiting, without a retry spent,
// and the sweeper enqueues it again when its turn comes.
func (c *Processor) wait(ctx context.Context, id int64) error {
	if err := c.Store.RequeueComplianceJob(ctx, id); err != nil {
		return fmt.Errorf("requeue busy compliance job %d: %w", id, err)
	}
	c.Logger.InfoContext(ctx, "compliance job waits for its turn", "job_id", id)
	return nil
}

// storedResult finds a result an earlier attempt stored but could not mark
// complete (its final write failed or its worker died just after). The
// stored result is final: it is never recomputed or replaced, and its counts
// are the ones that attempt recorded just before storing it. It returns
// blob.ErrNotFound when there is no stored result.
func (c *Processor) storedResult(ctx context.Context, job storage.ComplianceJob) (storage.ComplianceProgress, error) {
	_, err := c.Blobs.Stat(ctx, job.ResultKey)
	if err != nil {
		return storage.ComplianceProgress{}, err
	}
	c.Logger.InfoContext(ctx, "compliance result already stored; completing", "job_id", job.ID)
	return job.Progress(), nil
}

func (c *Processor) complete(ctx context.Context, log *slog.Logger, job storage.ComplianceJob, progress storage.ComplianceProgress, begin time.Time) error {
	if err := c.Store.CompleteComplianceJob(ctx, job.ID, progress, c.now()); err != nil {
		if errors.Is(err, storage.ErrConflict) {
			log.WarnContext(ctx, "compliance job finished elsewhere", "err", err)
			c.startNext(ctx, job)
			return nil
		}
		return fmt.Errorf("complete compliance job %d: %w", job.ID, err)
	}
	log.InfoContext(ctx, "compliance job complete", "lines", progress.LinesRead, "malformed", progress.MalformedLines,
		"results", progress.ResultLines, "seconds", time.Since(begin).Seconds())
	c.startNext(ctx, job)
	return nil
}

func (c *Processor) fail(ctx context.Context, job storage.ComplianceJob, reason string) {
	lifecycle{store: c.Store, blobs: c.Blobs, log: c.Logger}.fail(ctx, job, reason, c.now())
	c.startNext(ctx, job)
}

// process streams the upload through the checker into the result object.
// The final counts are recorded before the result is stored, so a retry
// that finds the result (storedResult) completes with the right counts.
func (c *Processor) process(ctx context.Context, job storage.ComplianceJob) (storage.ComplianceProgress, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	in, _, err := c.Blobs.Get(ctx, job.UploadKey)
	if errors.Is(err, blob.ErrNotFound) {
		return storage.ComplianceProgress{}, errNoUpload
	}
	if err != nil {
		return storage.ComplianceProgress{}, fmt.Errorf("open upload: %w", err)
	}
	defer in.Close()
	run := &checkRun{lookup: c.lookupFor(job.Type), batchSize: c.batchSize(), parallel: c.Parallel, onBatch: c.heartbeat(ctx, job.ID)}
	pr, pw := io.Pipe()
	putDone := make(chan error, 1)
	go func() {
		err := c.Blobs.Put(ctx, job.ResultKey, pr, -1, storage.ComplianceResultContentType)
		pr.CloseWithError(fmt.Errorf("result upload ended: %w", errOr(err, io.ErrClosedPipe)))
		putDone <- err
	}()
	out := bufio.NewWriterSize(pw, 256<<10)
	err = run.run(ctx, in, out)
	if err == nil && run.progress.LinesRead == run.progress.MalformedLines {
		err = noIDs(run.progress)
	}
	if err == nil {
		err = out.Flush()
	}
	if err == nil {
		err = c.Store.HeartbeatComplianceJob(ctx, job.ID, run.progress, c.now())
	}
	// Closing the pipe with an error makes the driver abort the upload while
	// ctx is still live (nothing partial is stored, no multipart parts are
	// left behind); closing it cleanly commits the result.
	pw.CloseWithError(err)
	if putErr := <-putDone; err == nil && putErr != nil {
		err = fmt.Errorf("store result: %w", putErr)
	}
	return run.progress, err
}

func errOr(err, fallback error) error {
	if err != nil {
		return err
	}
	return fallback
}

func (c *Processor) batchSize() int {
	if c.BatchSize > 0 {
		return c.BatchSize
	}
	return 10000
}

// heartbeat returns a batch callback that records progress at most every
// HeartbeatEvery, so the reconciler can tell a live job from an orphan.
func (c *Processor) heartbeat(ctx context.Context, id int64) func(storage.ComplianceProgress) {
	every := c.HeartbeatEvery
	if every <= 0 {
		every = 2 * time.Second
	}
	last := time.Now()
	return func(p storage.ComplianceProgress) {
		if time.Since(last) < every {
			return
		}
		last = time.Now()
		if err := c.Store.HeartbeatComplianceJob(ctx, id, p, c.now()); err != nil {
			c.Logger.WarnContext(ctx, "compliance heartbeat failed", "job_id", id, "err", err)
		}
	}
}

func (c *Processor) lookupFor(jobType string) lookupFunc {
	if jobType == storage.ComplianceTypeUsers {
		return c.lookupUsers
	}
	return c.lookupPosts
}

func (c *Processor) lookupPosts(ctx context.Context, ids []int64) (map[int64]action, error) {
	statuses, err := c.Store.PostsNeedingAction(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]action, len(statuses))
	for _, s := range statuses {
		if reason, at, ok := postAction(s); ok {
			out[s.ID] = action{CreatedAt: s.CreatedAt, RedactedAt: at, Reason: reason}
		}
	}
	return out, nil
}

func (c *Processor) lookupUsers(ctx context.Context, ids []int64) (map[int64]action, error) {
	users, err := c.Store.UsersNeedingAction(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]action, len(users))
	for _, u := range users {
		if reason, at, ok := userAction(u); ok {
			out[u.ID] = action{CreatedAt: u.CreatedAt, RedactedAt: at, Reason: reason}
		}
	}
	return out, nil
}

// FinalFailure is called once a task will not run again (it asked to skip
// retries, or they are used up): its job is marked failed, so a recorded
// job always reaches a final state. A job already final stays as it is.
func (c *Processor) FinalFailure(ctx context.Context, t *asynq.Task, attempts int, err error) {
	if t.Type() != tasks.TypeComplianceProcess {
		return
	}
	p, perr := tasks.ParseComplianceProcess(t)
	if perr != nil {
		return
	}
	job, lerr := c.Store.ComplianceJob(context.WithoutCancel(ctx), p.JobID)
	if lerr != nil {
		c.Logger.ErrorContext(ctx, "load failed compliance job", "job_id", p.JobID, "err", lerr)
		return
	}
	c.fail(ctx, job, failedAfterRetries(job.ID, attempts))
}
