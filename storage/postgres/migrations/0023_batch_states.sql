-- One batch pipeline (docs/architecture.md, "Batches: record, sweep,
-- apply"): do-not-reach batches carry the state columns of custom audience
-- batches (storage.BatchState: PENDING -> APPLIED | FAILED), so one table
-- access records, sweeps, applies and fails both. A FAILED do-not-reach
-- batch (its task archived) is still applied by a later batch of its list,
-- which applies the list's batches in order: its list shows PROCESSING
-- until then (every batch not APPLIED).

ALTER TABLE do_not_reach_batches
  ADD COLUMN state      text NOT NULL DEFAULT 'PENDING' CHECK (state IN ('PENDING', 'APPLIED', 'FAILED')),
  ADD COLUMN failure    text,
  ADD COLUMN settled_at timestamptz;

UPDATE do_not_reach_batches SET
  state = CASE WHEN applied_at IS NOT NULL THEN 'APPLIED' WHEN failed_at IS NOT NULL THEN 'FAILED' ELSE 'PENDING' END,
  settled_at = COALESCE(applied_at, failed_at);

DROP INDEX do_not_reach_batches_pending;
DROP INDEX do_not_reach_batches_due;
ALTER TABLE do_not_reach_batches DROP COLUMN applied_at, DROP COLUMN failed_at;

CREATE INDEX do_not_reach_batches_pending ON do_not_reach_batches(list_id, seq) WHERE state <> 'APPLIED';
CREATE INDEX do_not_reach_batches_due ON do_not_reach_batches(swept_at NULLS FIRST, created_at) WHERE state = 'PENDING';
