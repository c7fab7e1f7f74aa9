package ratelimit

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/storage/storagetest"
)

func testRedis(t *testing.T) (*redis.Client, string) { return storagetest.RedisPrefix(t) }

func deadRedis(t *testing.T) *redis.Client { return storagetest.DeadRedis(t) }
