-- Custom audience members and the users batches that change them (issue
-- 10, docs/ads-audiences.md).

-- A recorded POST .../custom_audiences/:id/users batch. The API validates
-- and records it (operations: the normalized operations, binary-encoded by
-- storage/postgres/ads_audiences.go; counts: the answer) and enqueues
-- audiences:apply_batch; the worker applies it in one transaction with the
-- membership changes and sets state APPLIED (or FAILED when the content
-- checks refuse it). Retries, per recording account, within 24 hours:
-- idempotency_key (the Idempotency-Key header, NULL without one) names a
-- request of (custom_audience_id, account_id) and body_sha256 (the body's
-- SHA-256, hex) tells a retry from a reuse of the key with another body;
-- without a key the same body is a retry only of the audience's latest
-- batch (seq). Recording is serialized per audience (an advisory lock),
-- so seq numbers the batches in the order they commit.
CREATE TABLE custom_audience_batches (
  id                 text PRIMARY KEY DEFAULT aviary_ads_id(),
  custom_audience_id text NOT NULL REFERENCES custom_audiences(id) ON DELETE CASCADE,
  account_id         text NOT NULL REFERENCES ad_accounts(id) ON DELETE CASCADE,
  seq                bigserial NOT NULL,
  idempotency_key    text,
  body_sha256        text NOT NULL,
  operations         bytea NOT NULL,
  counts             jsonb NOT NULL,
  state              text NOT NULL DEFAULT 'PENDING' CHECK (state IN ('PENDING', 'APPLIED', 'FAILED')),
  failure            text,
  created_at         timestamptz NOT NULL DEFAULT now(),
  settled_at         timestamptz,
  swept_at           timestamptz
);
-- Digests do not compress: store the operations out of line uncompressed
-- (pglz would spend milliseconds of every request failing to shrink them).
ALTER TABLE custom_audience_batches ALTER COLUMN operations SET STORAGE EXTERNAL;
CREATE INDEX custom_audience_batches_key ON custom_audience_batches(custom_audience_id, account_id, idempotency_key, created_at)
  WHERE idempotency_key IS NOT NULL;
CREATE INDEX custom_audience_batches_latest ON custom_audience_batches(custom_audience_id, seq);
-- Pending batches: PROCESSING of their audience, and the sweeper's scan.
CREATE INDEX custom_audience_batches_pending ON custom_audience_batches(custom_audience_id) WHERE state = 'PENDING';
CREATE INDEX custom_audience_batches_due ON custom_audience_batches(swept_at NULLS FIRST, created_at) WHERE state = 'PENDING';

-- One member of a custom audience: member_key is the identifier type byte
-- followed by the 32-byte SHA-256 digest (storage.MemberKey). Each
-- identifier value of a user object is one member; audience_size counts
-- these rows exactly, expired or not (readers subtract the expired ones,
-- which the audiences expiry sweep deletes, lowering audience_size in the
-- same transaction). Members are written only by the batch worker and the
-- expiry sweep with the audience row locked, tens of thousands at a time,
-- so audience_id has no foreign key (its per-row check would double the cost of a batch): the
-- trigger below removes the members of an audience row that is deleted.
CREATE TABLE custom_audience_members (
  audience_id  text NOT NULL,
  member_key   bytea NOT NULL,
  effective_at timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL,
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (audience_id, member_key)
);
-- members_expire_at is no later than the earliest expires_at of the
-- audience's members (NULL: no members). It is lowered by every batch
-- that adds members and recomputed by the expiry sweep, so readers and the
-- sweep look at an audience's members only once some may have expired: no
-- index on the members' expiry, whose upkeep would slow every batch.
ALTER TABLE custom_audiences ADD COLUMN members_expire_at timestamptz;
CREATE INDEX custom_audiences_members_expire ON custom_audiences(members_expire_at) WHERE members_expire_at IS NOT NULL;

CREATE FUNCTION custom_audience_members_cascade() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM custom_audience_members WHERE audience_id = OLD.id;
  RETURN OLD;
END $$;
CREATE TRIGGER custom_audience_members_cascade AFTER DELETE ON custom_audiences
  FOR EACH ROW EXECUTE FUNCTION custom_audience_members_cascade();
