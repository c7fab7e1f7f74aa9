package tasks

import (
	"errors"
	"testing"

	"github.com/hibiken/asynq"
)

func TestNewComplianceProcessRoundTrip(t *testing.T) {
	task, err := NewComplianceProcess(1460323737035677698)
	if err != nil {
		t.Fatal(err)
	}
	if task.Type() != TypeComplianceProcess || string(task.Payload()) != `{"job_id":1460323737035677698}` {
		t.Fatalf("task %s %s", task.Type(), task.Payload())
	}
	p, err := ParseComplianceProcess(task)
	if err != nil || p.JobID != 1460323737035677698 {
		t.Fatalf("parse: %+v %v", p, err)
	}
	if ComplianceTaskID(7) != "compliance-7" {
		t.Fatalf("task id %q", ComplianceTaskID(7))
	}
}

func TestParseComplianceProcessRejects(t *testing.T) {
	for name, payload := range map[string]string{
		"not json":   `{"job_id":`,
		"wrong type": `{"job_id":"7"}`,
		"no job id":  `{}`,
		"zero":       `{"job_id":0}`,
		"negative":   `{"job_id":-3}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseComplianceProcess(asynq.NewTask(TypeComplianceProcess, []byte(payload)))
			if !errors.Is(err, asynq.SkipRetry) {
				t.Fatalf("err %v does not skip retries", err)
			}
		})
	}
}
