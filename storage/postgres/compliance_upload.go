package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

// The compliance upload gateway's claim on a job's upload and the
// retention of its blobs (docs/compliance-upload-gateway.md,
// docs/compliance-lifecycle.md).

// ClaimComplianceUpload lets the PUT identified by claim take the upload of
// job id until leaseUntil. It succeeds only while the job is created, has no
// upload yet and no other PUT holds a live claim (one whose lease has not
// passed at). Otherwise it returns the job as stored with an error wrapping
// storage.ErrConflict (the caller tells the client why from the job), or
// storage.ErrNotFound.
func (db *DB) ClaimComplianceUpload(ctx context.Context, id int64, claim string, at, leaseUntil time.Time) (storage.ComplianceJob, error) {
	job, err := scanJob(db.pool.QueryRow(ctx, `UPDATE compliance_jobs
		SET upload_claim = $2, upload_lease_until = $4, upload_started_at = $3
		WHERE id = $1 AND status = 'created' AND uploaded_at IS NULL
		  AND (upload_claim IS NULL OR upload_lease_until < $3)
		RETURNING `+jobColumns, id, claim, at, leaseUntil))
	if err == nil {
		return job, nil
	}
	if !errors.Is(translate(err), storage.ErrNotFound) {
		return job, wrap(fmt.Sprintf("claim upload of compliance job %d", id), err)
	}
	job, err = db.ComplianceJob(ctx, id)
	if err != nil {
		return job, err
	}
	return job, fmt.Errorf("claim upload of compliance job %d: %w", id, storage.ErrConflict)
}

// RenewComplianceUpload extends claim's lease on the upload of job id. It
// returns storage.ErrConflict when claim no longer holds it.
func (db *DB) RenewComplianceUpload(ctx context.Context, id int64, claim string, leaseUntil time.Time) error {
	return db.execClaim(ctx, fmt.Sprintf("renew upload claim of compliance job %d", id),
		`UPDATE compliance_jobs SET upload_lease_until = $3 WHERE id = $1 AND upload_claim = $2`, id, claim, leaseUntil)
}

// CompleteComplianceUpload records that claim stored the upload of job id
// (size bytes, finished at) and ends the claim: from now on the job has its
// upload and takes no other. It returns storage.ErrConflict when claim no
// longer holds the upload or the job is no longer waiting for one (it
// failed meanwhile, say).
func (db *DB) CompleteComplianceUpload(ctx context.Context, id int64, claim string, size int64, at time.Time) error {
	return db.execClaim(ctx, fmt.Sprintf("complete upload of compliance job %d", id),
		`UPDATE compliance_jobs SET uploaded_at = $3, upload_bytes = $4, upload_claim = NULL, upload_lease_until = NULL,
			updated_at = $3 WHERE id = $1 AND upload_claim = $2 AND status = 'created' AND uploaded_at IS NULL`, id, claim, at, size)
}

// ReleaseComplianceUpload gives up claim's hold on the upload of job id (the
// PUT failed), so the client can retry. Releasing a claim that was lost is
// not an error.
func (db *DB) ReleaseComplianceUpload(ctx context.Context, id int64, claim string) error {
	_, err := db.pool.Exec(ctx, `UPDATE compliance_jobs SET upload_claim = NULL, upload_lease_until = NULL,
		upload_started_at = NULL WHERE id = $1 AND upload_claim = $2`, id, claim)
	return wrap(fmt.Sprintf("release upload claim of compliance job %d", id), err)
}

// execClaim runs an UPDATE guarded by the claim and reports a missed row as
// storage.ErrConflict.
func (db *DB) execClaim(ctx context.Context, op, sql string, args ...any) error {
	tag, err := db.pool.Exec(ctx, sql, args...)
	if err != nil {
		return wrap(op, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s: the claim was lost: %w", op, storage.ErrConflict)
	}
	return nil
}

// ComplianceJobsToPurge returns up to limit finished jobs whose blobs
// retention has not removed yet and whose retention ended: complete jobs
// whose download URL expired by now, failed jobs that failed by
// failedBefore. Oldest first.
func (db *DB) ComplianceJobsToPurge(ctx context.Context, now, failedBefore time.Time, limit int) ([]storage.ComplianceJob, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+jobColumns+` FROM compliance_jobs
		WHERE blobs_deleted_at IS NULL AND status IN ('complete', 'failed')
		  AND ((status = 'complete' AND download_expires_at <= $1) OR (status = 'failed' AND completed_at <= $2))
		ORDER BY id LIMIT $3`, now, failedBefore, limit)
	if err != nil {
		return nil, wrap("list compliance jobs to purge", err)
	}
	jobs, err := collectJobs(rows)
	return jobs, wrap("scan compliance jobs to purge", err)
}

// MarkComplianceBlobsDeleted records that the blobs of job id were deleted.
func (db *DB) MarkComplianceBlobsDeleted(ctx context.Context, id int64, at time.Time) error {
	_, err := db.pool.Exec(ctx, `UPDATE compliance_jobs SET blobs_deleted_at = $2 WHERE id = $1 AND blobs_deleted_at IS NULL`, id, at)
	return wrap(fmt.Sprintf("mark blobs of compliance job %d deleted", id), err)
}

// URLSigningKey returns the signing key stored under name, storing
// candidate first if there is none: every API replica passes a fresh random
// candidate and all of them end up with the first one stored.
func (db *DB) URLSigningKey(ctx context.Context, name string, candidate []byte) ([]byte, error) {
	if _, err := db.pool.Exec(ctx, `INSERT INTO url_signing_keys (name, key) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`,
		name, candidate); err != nil {
		return nil, wrap(fmt.Sprintf("store URL signing key %s", name), err)
	}
	var key []byte
	err := db.pool.QueryRow(ctx, `SELECT key FROM url_signing_keys WHERE name = $1`, name).Scan(&key)
	return key, wrap(fmt.Sprintf("load URL signing key %s", name), err)
}
