-- The task a lease's run is (docs/outages.md, "A killed worker's task comes
-- back within seconds"): the asynq queue and task id of the run holding
-- the lease, so a sweeper that finds the lease lapsed (its worker was
-- killed) can enqueue a rescue of that very task at once, under a derived
-- task id, instead of waiting a minute or two for asynq's own recovery of
-- the active task. Rows written without them (other time-based leases)
-- keep '' and are never rescued.
ALTER TABLE task_leases
  ADD COLUMN queue  text NOT NULL DEFAULT '',
  ADD COLUMN run_id text NOT NULL DEFAULT '';
