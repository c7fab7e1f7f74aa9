package workers

import (
	"context"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
)

// asynqQueuesKey is the Redis set in which asynq lists the queues it knows
// (its internal base.AllQueues). The asynq client adds a queue there on its
// first enqueue and remembers that it did; the inspector (the sweepers,
// /admin/queues/) finds a task only in a listed queue.
const asynqQueuesKey = "asynq:queues"

// QueueListInterval is how often KeepQueuesListed lists the queues again.
const QueueListInterval = time.Minute

// KeepQueuesListed adds queues to asynq's queue set now and then every
// interval until ctx ends. If Redis loses its data (restarted without
// persistence, flushed) while API processes keep running, their clients
// never list the queues again, tasks they enqueue still run, but the
// sweepers cannot inspect them ("queue not found"), so a task asynq
// archived would never settle its record. Listing is idempotent (SADD).
func KeepQueuesListed(ctx context.Context, client redis.Cmdable, queues []string, interval time.Duration, log *slog.Logger) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	failing := false
	for {
		err := listQueues(ctx, client, queues)
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			log.WarnContext(ctx, "list queues in Redis; retrying", "err", err)
			failing = true
		case err == nil:
			failing = false
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

func listQueues(ctx context.Context, client redis.Cmdable, queues []string) error {
	if len(queues) == 0 {
		return nil
	}
	members := make([]any, len(queues))
	for i, q := range queues {
		members[i] = q
	}
	return client.SAdd(ctx, asynqQueuesKey, members...).Err()
}
