package storagetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestRedisDBClaimsAreExclusive races several owners for the same
// databases (as parallel test processes do) and checks that each database
// goes to one owner at most and keeps that owner's claim after its flush.
func TestRedisDBClaimsAreExclusive(t *testing.T) {
	const owners = 8
	for round := range 20 {
		n := 1 + round%15
		var wg sync.WaitGroup
		won := make(chan string, owners)
		for i := range owners {
			owner := fmt.Sprintf("race-%d-%d-%s", round, i, RandomSuffix(4))
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := claimRedisDB(t.Context(), n, owner)
				if err != nil {
					t.Error(err)
				}
				if ok {
					won <- owner
				}
			}()
		}
		wg.Wait()
		close(won)
		var winners []string
		for w := range won {
			winners = append(winners, w)
		}
		if len(winners) > 1 {
			t.Fatalf("database %d claimed by %d owners at once: %v", n, len(winners), winners)
		}
		if len(winners) == 1 {
			checkClaim(t, n, winners[0])
			releaseRedisDB(n, winners[0])
		}
	}
}

func checkClaim(t *testing.T, n int, owner string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: RedisAddr(), DB: n})
	defer c.Close()
	got, err := c.Get(t.Context(), claimKey).Result()
	if err != nil || got != owner {
		t.Errorf("database %d claim = %q (%v), want %q", n, got, err, owner)
	}
}
