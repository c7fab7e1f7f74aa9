-- Compliance uploads go through the API (docs/compliance-upload-gateway.md)
-- and are deleted after their retention (docs/compliance-lifecycle.md).

-- The upload gateway's claim: a PUT sets upload_claim (a random token) and
-- upload_lease_until in one conditional UPDATE, so of two concurrent PUTs
-- exactly one wins; it renews the lease while the body streams and on
-- success records uploaded_at (the workers' upload signal) and the size.
-- A claim whose lease lapsed (its API process died) may be taken over.
-- blobs_deleted_at records that retention removed the job's upload and
-- result objects.
ALTER TABLE compliance_jobs
  ADD COLUMN upload_claim       text,
  ADD COLUMN upload_lease_until timestamptz,
  ADD COLUMN upload_started_at  timestamptz,
  ADD COLUMN uploaded_at        timestamptz,
  ADD COLUMN upload_bytes       bigint NOT NULL DEFAULT 0,
  ADD COLUMN blobs_deleted_at   timestamptz,
  ADD CONSTRAINT compliance_jobs_upload_claim CHECK ((upload_claim IS NULL) = (upload_lease_until IS NULL));

-- Finished jobs whose blobs retention has not removed yet.
CREATE INDEX compliance_jobs_retention ON compliance_jobs (status, download_expires_at, completed_at)
  WHERE blobs_deleted_at IS NULL AND status IN ('complete', 'failed');

-- Keys of the HMAC signatures of URLs the API serves itself (the
-- compliance upload URLs), shared by every API replica. The first replica
-- to start inserts one; the others read it.
CREATE TABLE url_signing_keys (
  name       text PRIMARY KEY,
  key        bytea NOT NULL CHECK (length(key) >= 32),
  created_at timestamptz NOT NULL DEFAULT now()
);
