package storage

import "time"

// TaskLease is one run's hold on a task id (migration 0020, 0050;
// workers/sweep.Hold, docs/outages.md): TaskID is the logical task id (the
// record's), RunID the asynq task id of the run that holds it (the same,
// or a rescue's derived id), Queue its queue. A lease whose ExpiresAt has
// passed without a release is a run that died (or lost its database).
type TaskLease struct {
	TaskID    string
	Holder    string
	Queue     string
	RunID     string
	ExpiresAt time.Time
}
