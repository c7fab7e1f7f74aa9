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
	ComplianceJob(ctx context.Context, id int64) (storage.ComplianceJob, error)
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
	begin := time.Now()
	progress, err := c.storedResult(ctx, job)
	if errors.Is(err, blob.ErrNotFound) {
		log.InfoContext(ctx, "compliance job started")
		progress, err = c.process(ctx, job)
	}
	if errors.Is(err, errUnreadable) || errors.Is(err, errNoUpload) {
		c.fail(ctx, job, reasonFor(err))
		return fmt.Errorf("compliance job %d: %v: %w", job.ID, err, asynq.SkipRetry)
	}
	if err != nil {
		return fmt.Errorf("process compliance job %d: %w", job.ID, err)
	}
	return c.complete(ctx, log, job, progress, begin)
}

// storedResult finds a result an earlier attempt stored but could not mark
// complete (its final write failed or its worker died just after). The
// stored result is final: it is never recomputed or replaced, and its counts
// are the ones that attempt recorded just before storing it. It returns
// blob.ErrNotFound when there is no stored result.
func (c *Compliance) storedResult(ctx context.Context, job storage.ComplianceJob) (storage.ComplianceProgress, error) {
	_, err := c.Blobs.Stat(ctx, job.ResultKey)
	if err != nil {
		return storage.ComplianceProgress{}, err
	}
	c.Logger.InfoContext(ctx, "compliance result already stored; completing", "job_id", job.ID)
	return storage.ComplianceProgress{LinesRead: job.LinesRead, MalformedLines: job.MalformedLines, ResultLines: job.ResultLines}, nil
}

func (c *Compliance) complete(ctx context.Context, log *slog.Logger, job storage.ComplianceJob, progress storage.ComplianceProgress, begin time.Time) error {
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

// errNoUpload marks a job whose upload object is gone.
var errNoUpload = errors.New("upload not found")

// reasonFor is the client-facing failure reason. Only errors of our own
// making are shown; internal errors never reach clients.
func reasonFor(err error) string {
	if errors.Is(err, errNoUpload) {
		return "The uploaded file could not be found."
	}
	return fmt.Sprintf("The uploaded file could not be read: %v", err)
}

// failedAfterRetries is the client-facing reason when every attempt failed;
// the cause is in the worker logs.
func failedAfterRetries(jobID int64, attempts int) string {
	return fmt.Sprintf("Processing failed after %d attempts. The operator can find the cause in the worker logs (job %d).", attempts, jobID)
}

func (c *Compliance) fail(ctx context.Context, job storage.ComplianceJob, reason string) {
	failJob(context.WithoutCancel(ctx), c.Store, c.Blobs, c.Logger, job, reason, c.now())
}

// jobFailer is the record access failJob needs.
type jobFailer interface {
	FailComplianceJob(ctx context.Context, id int64, reason string, at time.Time) error
}

// failJob marks an open job failed and removes any result an attempt stored,
// so a failed job never serves a download.
func failJob(ctx context.Context, store jobFailer, blobs blob.Store, log *slog.Logger, job storage.ComplianceJob, reason string, at time.Time) {
	err := store.FailComplianceJob(ctx, job.ID, reason, at)
	if errors.Is(err, storage.ErrConflict) {
		return // already final
	}
	if err != nil {
		log.ErrorContext(ctx, "mark compliance job failed", "job_id", job.ID, "err", err)
		return
	}
	if err := blobs.Delete(ctx, job.ResultKey); err != nil {
		log.WarnContext(ctx, "remove result of failed compliance job", "job_id", job.ID, "err", err)
	}
}

// process streams the upload through the checker into the result object.
// The final counts are recorded before the result is stored, so a retry
// that finds the result (storedResult) completes with the right counts.
func (c *Compliance) process(ctx context.Context, job storage.ComplianceJob) (storage.ComplianceProgress, error) {
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
		err := c.Blobs.Put(ctx, job.ResultKey, pr, -1, "application/json")
		pr.CloseWithError(fmt.Errorf("result upload ended: %w", errOr(err, io.ErrClosedPipe)))
		putDone <- err
	}()
	out := bufio.NewWriterSize(pw, 256<<10)
	err = run.run(ctx, in, out)
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
	c.Logger.ErrorContext(ctx, "compliance job will not be retried", "job_id", p.JobID, "attempts", retried+1, "err", err)
	job, lerr := c.Store.ComplianceJob(context.WithoutCancel(ctx), p.JobID)
	if lerr != nil {
		c.Logger.ErrorContext(ctx, "load failed compliance job", "job_id", p.JobID, "err", lerr)
		return
	}
	c.fail(ctx, job, failedAfterRetries(job.ID, retried+1))
}

// finalAttempt reports whether asynq will not run a task again after it
// failed with err on the attempt that had been retried retried times: the
// handler asked to skip retries, or the retries are used up (asynq archives
// a task once retried >= maxRetry).
func finalAttempt(retried, maxRetry int, err error) bool {
	return errors.Is(err, asynq.SkipRetry) || retried >= maxRetry
}
