// Package tasks holds the wire contract between the API tier and the worker
// pools: task type names, queue names and payload structs. Type names are
// stable identifiers stored in Redis; never rename one, add a new one instead.
//
// The package depends only on asynq and the standard library so that both
// tiers can import it without pulling in each other's dependencies.
package tasks

import (
	"encoding/json"
	"fmt"

	"github.com/hibiken/asynq"
)

// Queue names. Each queue can be served by its own worker deployment
// (aviary worker --queues ...), so heavy work never starves light work.
const (
	QueueDefault    = "default"
	QueueCompliance = "compliance"
	QueueMedia      = "media"
	// QueueAudiences applies custom audience and do-not-reach batches.
	QueueAudiences = "audiences"
	// QueueCatalogs checks product images (outbound fetches).
	QueueCatalogs = "catalogs"
	// QueueInsights keeps the keyword insights aggregates and the news
	// stories (docs/insights.md, docs/news.md).
	QueueInsights = "insights"
	// QueueWebhooks runs webhook replay jobs (docs/webhooks.md).
	QueueWebhooks = "webhooks"
)

// Queue is a queue's name and its default priority weight.
type Queue struct {
	Name   string
	Weight int
}

// Queues returns every queue with its default priority weight, ordered by
// name. The slice is the caller's own: changing it changes no one else's.
func Queues() []Queue {
	return []Queue{
		{QueueAudiences, 2},
		{QueueCatalogs, 1},
		{QueueCompliance, 3},
		{QueueDefault, 2},
		{QueueInsights, 1},
		{QueueMedia, 1},
		{QueueWebhooks, 1},
	}
}

// IsQueue reports whether name is one of Queues.
func IsQueue(name string) bool {
	for _, q := range Queues() {
		if q.Name == name {
			return true
		}
	}
	return false
}

// decode unmarshals a task payload; a malformed payload can never succeed, so
// it is wrapped with asynq.SkipRetry.
// ErrClientInput marks a task that failed for good because of what the
// client sent (an unreadable upload, say), not because Aviary failed: the
// error wraps asynq.SkipRetry, so it is not retried, and the worker logs it
// at Warn rather than Error. Wrap it in a handler's error:
// fmt.Errorf("job %d: %v: %w", id, cause, tasks.ErrClientInput).
var ErrClientInput = fmt.Errorf("client input cannot be processed: %w", asynq.SkipRetry)

func decode(t *asynq.Task, v any) error {
	if err := json.Unmarshal(t.Payload(), v); err != nil {
		return fmt.Errorf("decode %s payload: %v: %w", t.Type(), err, asynq.SkipRetry)
	}
	return nil
}
