package api_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/storage/opsredis"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// TestOpsRecorder: the API counts its answers per app and status class and
// keeps its error answers with the problem's type and title, the app and
// the request id; the console's and Aviary's own paths are not recorded.
func TestOpsRecorder(t *testing.T) {
	addr, n := storagetest.RedisDB(t)
	rc := redis.NewClient(&redis.Options{Addr: addr, DB: n})
	t.Cleanup(func() { rc.Close() })
	store := opsredis.New(rc, "t:ops:")
	rec := opsredis.NewRecorder(store, nil)
	b := apitest.Setup(t, 100, func(d *api.Deps) { d.Ops = rec })
	start := time.Now()
	me := "/2/users/" + strconv.FormatInt(b.User.ID, 10)
	calls := []struct {
		path, authz string
		status      int
	}{
		{me, b.Bearer, 200},
		{"/2/users/abc", b.Bearer, 400},
		{me, "", 401},
		{"/2/nowhere", b.OtherBearer, 404},
		{"/_aviary/health", "", 200},
		{"/console/apps", "", 404},
	}
	for _, c := range calls {
		if r := b.Call(t, "GET", c.path, c.authz, "", nil); r.Status != c.status {
			t.Fatalf("%s: %d, want %d: %s", c.path, r.Status, c.status, r.Raw)
		}
	}
	ctx := context.Background()
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	errs, err := store.Errors(ctx, []int64{b.App.ID, 0}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) != 3 {
		t.Fatalf("errors %+v, want the 400 and 401 and the unmatched 404", errs)
	}
	byStatus := map[int]int{}
	for i, e := range errs {
		byStatus[e.Status] = i
		if e.RequestID == "" || e.Method != "GET" || e.At.Before(start.Add(-time.Second)) {
			t.Errorf("record %+v", e)
		}
		if i > 0 && e.At.After(errs[i-1].At) {
			t.Errorf("not newest first: %+v", errs)
		}
	}
	bad := errs[byStatus[400]]
	if bad.AppID != b.App.ID || bad.Path != "/2/users/abc" || bad.Type != "https://api.x.com/2/problems/invalid-request" || bad.Title == "" {
		t.Errorf("400 record %+v", bad)
	}
	if e := errs[byStatus[401]]; e.AppID != 0 || e.Title != "Unauthorized" {
		t.Errorf("401 record %+v", e)
	}
	tests := []struct {
		name string
		apps []int64
		want [4]int64
	}{
		{"the app", []int64{b.App.ID}, [4]int64{1, 0, 1, 0}},
		{"every app and none", nil, [4]int64{1, 0, 3, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from := start.Truncate(time.Minute)
			mins, err := store.Requests(ctx, tt.apps, from, 2)
			if err != nil {
				t.Fatal(err)
			}
			var sum [4]int64
			for _, m := range mins {
				for i, n := range m.ByClass {
					sum[i] += n
				}
			}
			if sum != tt.want {
				t.Errorf("by class %v, want %v", sum, tt.want)
			}
		})
	}
}
