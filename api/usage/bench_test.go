package usage_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/api/usage"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// memStore is an in-memory usage.Store for the benchmark.
type memStore struct {
	mu   sync.Mutex
	days []storage.UsageDay
}

func (s *memStore) AppUsageSettings(_ context.Context, appID int64) (storage.UsageSettings, error) {
	return storage.UsageSettings{AppID: appID, CreditsAdded: 1 << 60}, nil
}

func (s *memStore) AddUsage(_ context.Context, days []storage.UsageDay) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.days = append(s.days, days...)
	return nil
}

func (s *memStore) UsageDays(context.Context, int64, time.Time, time.Time) ([]storage.UsageDay, error) {
	return nil, nil
}

func (s *memStore) UsageSince(context.Context, int64, time.Time) (storage.UsageCounts, error) {
	return storage.UsageCounts{}, nil
}

// searchPage is a search answer of 10 posts with 3 included posts and 5
// users, as GET /2/tweets/search/recent writes it.
func searchPage() any {
	tweets := make([]render.Tweet, 10)
	for i := range tweets {
		tweets[i] = render.Tweet{ID: "1460323737035677698", Text: "a post of about a hundred characters, with a #hashtag and a mention of @someone"}
	}
	return struct {
		Data     []render.Tweet   `json:"data"`
		Includes *render.Includes `json:"includes"`
	}{tweets, &render.Includes{Tweets: tweets[:3], Users: make([]render.User, 5)}}
}

// BenchmarkMeterOverhead measures what metering adds to one search answer:
// "unmetered" is the endpoint without the meter; "counts" meters with
// caps and credits off (count, one Redis round trip to add); "caps and
// credits" also checks a read cap and the balance first (a second round
// trip). Redis is the local one the tests use.
func BenchmarkMeterOverhead(b *testing.B) {
	addr, n := storagetest.RedisDB(b)
	rc := redis.NewClient(&redis.Options{Addr: addr, DB: n})
	b.Cleanup(func() { rc.Close() })
	body := searchPage()
	endpoint := httpx.Endpoint{Pattern: "GET /2/tweets/search/recent"}
	handler := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _ = httpx.WriteJSON(w, http.StatusOK, body) })
	req := httptest.NewRequest("GET", "/2/tweets/search/recent?query=x", nil)
	req = req.WithContext(auth.WithPrincipal(req.Context(), auth.Principal{App: storage.App{ID: 42}, Method: auth.MethodBearer}))
	meter := func(cfg usage.Config) http.Handler {
		m := usage.New(cfg, usage.Deps{Store: &memStore{}, Redis: rc, Prefix: "bench:"})
		return m.Middleware(endpoint)(handler)
	}
	cases := []struct {
		name string
		h    http.Handler
	}{
		{"unmetered", handler},
		{"counts", meter(usage.Config{})},
		{"caps and credits", meter(usage.Config{ReadCap: 1 << 60, Prices: usage.Prices{PostRead: 1}})},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				c.h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d %s", w.Code, w.Body)
				}
			}
		})
	}
}
