package compliance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/tasks"
)

// The upload gateway (docs/compliance-upload-gateway.md): a job's
// upload_url points at PUT /2/compliance/jobs/{id}/upload on the API, signed
// with the job's upload expiry. The PUT needs no Authorization header (the
// signature is the credential). It claims the job's upload in PostgreSQL,
// so a job takes exactly one upload, and only while it is created; it
// streams the body into the blob store under the size cap, then records
// the upload, which is what the workers wait for.

// errClaimLost cancels an upload whose claim another PUT took over (its
// lease lapsed while renewals failed).
var errClaimLost = errors.New("the upload claim was lost")

// releaseTimeout bounds the bookkeeping after an upload, which runs even
// when the client has gone away.
const releaseTimeout = 10 * time.Second

// uploadPath is the path of job id's upload URL; it is also the resource its
// signature covers.
func uploadPath(id int64) string {
	return "/2/compliance/jobs/" + httpx.FormatID(id) + "/upload"
}

// uploadURL is the signed upload URL of job id, valid until expires, under
// PublicURL or else the origin of r (the request creating the job).
func (m *Module) uploadURL(r *http.Request, id int64, expires time.Time) string {
	base := strings.TrimRight(m.PublicURL, "/")
	if base == "" {
		base = requestOrigin(r)
	}
	q := m.Uploads.Sign(http.MethodPut, uploadPath(id), expires)
	return base + uploadPath(id) + "?" + q.Encode()
}

// requestOrigin is the scheme and host r was sent to: https on TLS
// connections or behind a proxy that says so, else http.
func requestOrigin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(strings.TrimSpace(strings.Split(r.Header.Get("X-Forwarded-Proto"), ",")[0]), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// verifyUpload checks the upload URL's signature and expiry (403). It is
// the endpoint's auth.Signed check, so it runs before the rate limit: a
// forged request costs the job none of its quota.
func (m *Module) verifyUpload(r *http.Request) error {
	id, err := httpx.PathID(r, "id")
	if err != nil {
		return err
	}
	if err := m.Uploads.Verify(http.MethodPut, uploadPath(id), r.URL.Query(), m.Clock()); err != nil {
		return apierr.Forbidden(fmt.Sprintf("This upload URL is refused: %v. Create a new compliance job for a fresh one.", err))
	}
	return nil
}

// upload serves PUT /2/compliance/jobs/{id}/upload, whose signature
// verifyUpload checked.
func (m *Module) upload(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathID(r, "id")
	if err != nil {
		return err
	}
	if r.ContentLength > m.MaxUpload {
		return apierr.PayloadTooLarge(m.MaxUpload)
	}
	claim, err := newClaim()
	if err != nil {
		return err
	}
	now := m.Clock().UTC()
	job, err := m.Store.ClaimComplianceUpload(r.Context(), id, claim, now, now.Add(storage.ComplianceUploadLease))
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return apierr.NotFound("compliance_job", "id", httpx.FormatID(id))
	case errors.Is(err, storage.ErrConflict):
		return apierr.Conflict(refusal(job, now))
	case err != nil:
		return fmt.Errorf("claim upload of compliance job %d: %w", id, err)
	}
	log := m.Logger.With("job_id", job.ID, "app_id", job.AppID)
	size, err := m.store(w, r, job, claim)
	done := context.WithoutCancel(r.Context())
	if err != nil {
		ctx, cancel := context.WithTimeout(done, releaseTimeout)
		defer cancel()
		if rerr := m.Store.ReleaseComplianceUpload(ctx, job.ID, claim); rerr != nil {
			log.WarnContext(ctx, "release compliance upload claim", "err", rerr)
		}
		return err
	}
	ctx, cancel := context.WithTimeout(done, releaseTimeout)
	defer cancel()
	err = m.Store.CompleteComplianceUpload(ctx, job.ID, claim, size, m.Clock().UTC())
	if errors.Is(err, storage.ErrConflict) {
		return apierr.Conflict("Another upload to this job took over while this one was stored; the job processes that one.")
	}
	if err != nil {
		return fmt.Errorf("record upload of compliance job %d: %w", job.ID, err)
	}
	log.InfoContext(ctx, "compliance upload stored", "bytes", size)
	m.enqueue(ctx, log, job)
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
	return nil
}

// enqueue hands an uploaded job's task to the queue at once when it is the
// job's turn (tasks.EnqueueRecorded), so processing starts without waiting
// for a sweeper tick; any failure here only leaves the job to the sweeper.
func (m *Module) enqueue(ctx context.Context, log *slog.Logger, job storage.ComplianceJob) {
	if m.Queue == nil {
		return
	}
	turnCtx, cancel := context.WithTimeout(ctx, tasks.EnqueueTimeout)
	defer cancel()
	turn, err := m.Store.ComplianceJobTurn(turnCtx, job)
	if err != nil {
		log.WarnContext(ctx, "check the turn of an uploaded compliance job; the sweeper will enqueue it", "err", err)
		return
	}
	if !turn {
		return // a job ahead of it finishes first, then this one is enqueued
	}
	tasks.EnqueueRecorded(ctx, m.Queue, log, "uploaded compliance job", func() (*asynq.Task, error) { return tasks.NewComplianceProcess(job.ID) })
}

// store streams r's body (at most MaxUpload bytes) into job's upload object
// while renewing claim, and returns its size. Its errors are rendered for
// the client: 413 over the cap, 400 for a body that broke off, 409 when the
// claim was lost, else an internal error.
func (m *Module) store(w http.ResponseWriter, r *http.Request, job storage.ComplianceJob, claim string) (int64, error) {
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	stop := m.keepClaim(ctx, cancel, job.ID, claim)
	body := &bodyReader{r: http.MaxBytesReader(w, r.Body, m.MaxUpload)}
	err := m.Blobs.Put(ctx, job.UploadKey, body, r.ContentLength, r.Header.Get("Content-Type"))
	stop()
	var tooLarge *http.MaxBytesError
	switch {
	case err == nil && body.err == nil:
		return body.n, nil
	case errors.As(body.err, &tooLarge):
		return 0, apierr.PayloadTooLarge(m.MaxUpload)
	case errors.Is(context.Cause(ctx), errClaimLost):
		return 0, apierr.Conflict("Another upload to this job took over while this one was stored; the job processes that one.")
	case r.Context().Err() != nil:
		return 0, apierr.ClientDisconnected()
	case body.err != nil:
		// Also when the store committed what it read: a body that broke off
		// is never recorded as the upload (the next complete PUT replaces it).
		return 0, apierr.InvalidParam("body", fmt.Sprintf("The upload body could not be read: %v.", body.err))
	}
	return 0, fmt.Errorf("store upload of compliance job %d: %w", job.ID, err)
}

// leaseMargin is how long before its lease ends an upload whose renewals
// failed gives up, so a retry that takes the lapsed claim over never races
// it to the object.
const leaseMargin = 5 * time.Second

// keepClaim renews claim's lease every storage.ComplianceUploadRenew until
// the returned stop is called; a renewal that finds the claim lost cancels
// ctx with errClaimLost. Other renewal failures are logged: the lease
// outlives several of them, but if none succeeds before the lease is about
// to end the upload is cancelled with errClaimLost too.
func (m *Module) keepClaim(ctx context.Context, cancel context.CancelCauseFunc, id int64, claim string) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(storage.ComplianceUploadRenew)
		defer t.Stop()
		expiring := time.NewTimer(storage.ComplianceUploadLease - leaseMargin)
		defer expiring.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-expiring.C:
				m.Logger.WarnContext(ctx, "compliance upload claim about to lapse; cancelling the upload", "job_id", id)
				cancel(errClaimLost)
				return
			case <-t.C:
			}
			err := m.Store.RenewComplianceUpload(ctx, id, claim, m.Clock().UTC().Add(storage.ComplianceUploadLease))
			switch {
			case errors.Is(err, storage.ErrConflict):
				m.Logger.WarnContext(ctx, "compliance upload claim lost; cancelling the upload", "job_id", id)
				cancel(errClaimLost)
				return
			case err == nil:
				expiring.Reset(storage.ComplianceUploadLease - leaseMargin)
			case ctx.Err() == nil:
				m.Logger.WarnContext(ctx, "renew compliance upload claim", "job_id", id, "err", err)
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// refusal tells the client why job takes no upload now.
func refusal(job storage.ComplianceJob, now time.Time) string {
	switch {
	case job.UploadedAt != nil:
		return "An upload to this job is already complete: a job takes one upload. Create a new job to check other ids."
	case job.Status != storage.JobCreated:
		return fmt.Sprintf("This job is already %s and no longer takes uploads. Create a new job to check other ids.", job.Status)
	case job.UploadLeaseUntil != nil && now.Before(*job.UploadLeaseUntil):
		return "An upload to this job is already in progress. Wait for it to finish; if it fails, retry the upload."
	}
	return "This job does not take an upload now; retry in a moment."
}

// newClaim is a random token identifying one PUT's claim.
func newClaim() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("upload claim token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// bodyReader counts the bytes read from r and keeps its first error other
// than io.EOF, so a failed upload can be told apart: the client's body
// (over the cap, broken off) or the blob store.
type bodyReader struct {
	r   io.Reader
	n   int64
	err error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
	}
	return n, err
}
