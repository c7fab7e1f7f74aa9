package tasks

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
)

// TypeComplianceProcess checks every id of an uploaded compliance file and
// writes the job's result file. The task id is the job id, so enqueueing the
// same job twice is a no-op while the first task exists.
const TypeComplianceProcess = "compliance:process"

// ComplianceProcess is the payload of TypeComplianceProcess.
type ComplianceProcess struct {
	JobID int64 `json:"job_id"`
}

// ComplianceTaskTimeout bounds one attempt at a compliance job.
const ComplianceTaskTimeout = 2 * time.Hour

// ComplianceMaxRetry is how many times a failed attempt is retried.
const ComplianceMaxRetry = 12

// NewComplianceProcess builds the task for one compliance job.
func NewComplianceProcess(jobID int64) (*asynq.Task, error) {
	payload, err := json.Marshal(ComplianceProcess{JobID: jobID})
	if err != nil {
		return nil, fmt.Errorf("encode compliance payload: %w", err)
	}
	return asynq.NewTask(TypeComplianceProcess, payload,
		asynq.TaskID(ComplianceTaskID(jobID)),
		asynq.Queue(QueueCompliance),
		asynq.MaxRetry(ComplianceMaxRetry),
		asynq.Timeout(ComplianceTaskTimeout),
		asynq.Retention(24*time.Hour),
	), nil
}

// ComplianceTaskID is the asynq task id used for a compliance job.
func ComplianceTaskID(jobID int64) string {
	return fmt.Sprintf("compliance-%d", jobID)
}

// ParseComplianceProcess decodes a TypeComplianceProcess payload.
func ParseComplianceProcess(t *asynq.Task) (ComplianceProcess, error) {
	var p ComplianceProcess
	if err := decode(t, &p); err != nil {
		return p, err
	}
	if p.JobID <= 0 {
		return p, fmt.Errorf("compliance payload without job id: %w", asynq.SkipRetry)
	}
	return p, nil
}
