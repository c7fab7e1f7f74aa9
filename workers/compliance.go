package workers

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

// ComplianceStore is the record access compliance processing needs.
type ComplianceStore interface {
	StartComplianceJob(ctx context.Context, id int64, at time.Time) (storage.ComplianceJob, bool, error)
	HeartbeatComplianceJob(ctx context.Context, id int64, p storage.ComplianceProgress, at time.Time) error
	CompleteComplianceJob(ctx context.Context, id int64, p storage.ComplianceProgress, at time.Time) error
	FailComplianceJob(ctx context.Context, id int64, reason string, at time.Time) error
	PostStatuses(ctx context.Context, ids []int64) ([]storage.PostStatus, error)
	UsersByIDs(ctx context.Context, ids []int64) ([]storage.User, error)
}

// Compliance processes TypeComplianceProcess tasks: it streams the uploaded
// ids, checks each against the platform's records and writes the result
// file in one atomic Put, then completes the job. A retried attempt redoes
// the whole file and produces the same result.
type Compliance struct {
	Store          ComplianceStore
	Blobs          blob.Store
	Logger         *slog.Logger
	Clock          func() time.Time
	BatchSize      int           // ids per database lookup (default 5000)
	Parallel       int           // lookups in flight per job (default 2)
	HeartbeatEvery time.Duration // progress write interval (default 2 s)
}

func (c *Compliance) now() time.Time {
	if c.Clock != nil {
		return c.Clock().UTC()
	}
	return time.Now().UTC()
}

// ProcessTask implements asynq.Handler.
func (c *Compliance) ProcessTask(ctx context.Context, t *asynq.Task) error {
	p, err := tasks.ParseComplianceProcess(t)
	if err != nil {
		return err
	}
	job, started, err := c.Store.StartComplianceJob(ctx, p.JobID, c.now())
	if errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("compliance job %d does not exist: %w", p.JobID, asynq.SkipRetry)
	}
	if err != nil {
		return fmt.Errorf("start compliance job %d: %w", p.JobID, err)
	}
	if !started {
		c.Logger.InfoContext(ctx, "compliance job already finished", "job_id", job.ID, "status", job.Status)
		return nil
	}
	log := c.Logger.With("job_id", job.ID, "type", job.Type, "attempt", job.Attempts)
	log.InfoContext(ctx, "compliance job started")
	begin := time.Now()
	progress, err := c.process(ctx, job)
	if errors.Is(err, errUnreadable) || errors.Is(err, blob.ErrNotFound) {
		c.fail(ctx, job.ID, reasonFor(err))
		return fmt.Errorf("compliance job %d: %v: %w", job.ID, err, asynq.SkipRetry)
	}
	if err != nil {
		return fmt.Errorf("process compliance job %d: %w", job.ID, err)
	}
	if err := c.Store.CompleteComplianceJob(ctx, job.ID, progress, c.now()); err != nil {
		if errors.Is(err, storage.ErrConflict) {
			log.WarnContext(ctx, "compliance job finished elsewhere", "err", err)
			return nil
		}
		return fmt.Errorf("complete compliance job %d: %w", job.ID, err)
	}
	log.InfoContext(ctx, "compliance job complete", "lines", progress.LinesRead, "malformed", progress.MalformedLines,
		"results", progress.ResultLines, "seconds", time.Since(begin).Seconds())
	return nil
}

func reasonFor(err error) string {
	if errors.Is(err, blob.ErrNotFound) {
		return "The uploaded file could not be found."
	}
	return fmt.Sprintf("The uploaded file could not be read: %v", err)
}

func (c *Compliance) fail(ctx context.Context, id int64, reason string) {
	err := c.Store.FailComplianceJob(context.WithoutCancel(ctx), id, reason, c.now())
	if err != nil && !errors.Is(err, storage.ErrConflict) {
		c.Logger.ErrorContext(ctx, "mark compliance job failed", "job_id", id, "err", err)
	}
}

// process streams the upload through the checker into the result object.
func (c *Compliance) process(ctx context.Context, job storage.ComplianceJob) (storage.ComplianceProgress, error) {
	in, _, err := c.Blobs.Get(ctx, job.UploadKey)
	if err != nil {
		return storage.ComplianceProgress{}, fmt.Errorf("open upload: %w", err)
	}
	defer in.Close()
	run := &checkRun{lookup: c.lookupFor(job.Type), batchSize: c.batchSize(), parallel: c.Parallel, onBatch: c.heartbeat(ctx, job.ID)}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	putDone := make(chan error, 1)
	go func() {
		err := c.Blobs.Put(ctx, job.ResultKey, pr, -1, "application/json")
		pr.CloseWithError(fmt.Errorf("result upload ended: %w", errOr(err, io.ErrClosedPipe)))
		putDone <- err
	}()
	out := bufio.NewWriterSize(pw, 256<<10)
	err = run.run(ctx, in, out)
	if err == nil {
		err = out.Flush()
	}
	if err != nil {
		cancel() // abort the upload: nothing partial is stored
	}
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

func (c *Compliance) batchSize() int {
	if c.BatchSize > 0 {
		return c.BatchSize
	}
	return 5000
}

// heartbeat returns a batch callback that records progress at most every
// HeartbeatEvery, so the reconciler can tell a live job from an orphan.
func (c *Compliance) heartbeat(ctx context.Context, id int64) func(storage.ComplianceProgress) {
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

func (c *Compliance) lookupFor(jobType string) lookupFunc {
	if jobType == storage.ComplianceTypeUsers {
		return c.lookupUsers
	}
	return c.lookupPosts
}

func (c *Compliance) lookupPosts(ctx context.Context, ids []int64) (map[int64]action, error) {
	statuses, err := c.Store.PostStatuses(ctx, ids)
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

func (c *Compliance) lookupUsers(ctx context.Context, ids []int64) (map[int64]action, error) {
	users, err := c.Store.UsersByIDs(ctx, ids)
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

// HandleError is the asynq error handler for compliance tasks: once a task
// will not be retried again (SkipRetry or retries exhausted) its job is
// marked failed, so a recorded job always reaches a final state.
func (c *Compliance) HandleError(ctx context.Context, t *asynq.Task, err error) {
	if t.Type() != tasks.TypeComplianceProcess {
		return
	}
	p, perr := tasks.ParseComplianceProcess(t)
	if perr != nil {
		return
	}
	retried, _ := asynq.GetRetryCount(ctx)
	maxRetry, _ := asynq.GetMaxRetry(ctx)
	if !finalAttempt(retried, maxRetry, err) {
		c.Logger.WarnContext(ctx, "compliance attempt failed; will retry", "job_id", p.JobID, "retried", retried, "err", err)
		return
	}
	c.fail(ctx, p.JobID, fmt.Sprintf("Processing failed after %d attempts: %v", retried+1, err))
}

// finalAttempt reports whether asynq will not run a task again after it
// failed with err on the attempt that had been retried retried times: the
// handler asked to skip retries, or the retries are used up (asynq archives
// a task once retried >= maxRetry).
func finalAttempt(retried, maxRetry int, err error) bool {
	return errors.Is(err, asynq.SkipRetry) || retried >= maxRetry
}
