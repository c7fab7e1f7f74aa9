package main

import (
	"context"
	"errors"
	"io"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// outageLimit is a generous multiple of the default dependency timeout
// (500ms): it only proves a call did not wait for a driver default (go-redis
// took 5 s and more, pgx waits forever). No timed assertion for speed.
const outageLimit = 3 * time.Second

// TestBackendsBoundDependencyCalls opens the backends as `aviary api` does,
// against a private Redis and a proxied PostgreSQL, freezes both, and checks
// that calls without any deadline of their own still give up quickly.
func TestBackendsBoundDependencyCalls(t *testing.T) {
	rp := storagetest.PrivateRedis(t)
	_, dbURL := storagetest.NewDB(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	px := storagetest.NewProxy(t, u.Host)
	u.Host = px.Addr()
	clearConfigEnv(t, map[string]string{"AVIARY_DATABASE_URL": u.String(), "AVIARY_REDIS_URL": "redis://" + rp.Addr + "/0",
		"AVIARY_BLOB_DRIVER": "local", "AVIARY_BLOB_DIR": t.TempDir()})
	cfg, _, err := parseFlags("api", nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	b, err := openBackends(context.Background(), cfg, newLogger(cfg, io.Discard))
	if err != nil {
		t.Fatalf("open backends: %v", err)
	}
	defer b.Close()
	calls := []struct {
		name        string
		call        func(context.Context) error
		unavailable bool // the error must wrap storage.ErrUnavailable
	}{
		{"redis ping", func(ctx context.Context) error { return b.redis.Ping(ctx).Err() }, false},
		{"API database lookup", func(ctx context.Context) error { _, err := b.apiDB.AppByBearerToken(ctx, "x"); return err }, true},
	}
	rp.Freeze()
	px.Freeze()
	defer px.Thaw()
	defer rp.Thaw()
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			elapsed, err := callWithWatchdog(c.call)
			if err == nil {
				t.Fatal("call to a frozen dependency succeeded")
			}
			if c.unavailable && !errors.Is(err, storage.ErrUnavailable) {
				t.Errorf("err %v; want storage.ErrUnavailable", err)
			}
			if elapsed >= outageLimit {
				t.Errorf("gave up after %v; want under %v (%v)", elapsed.Round(time.Millisecond), outageLimit, err)
			}
		})
	}
}

// callWithWatchdog runs call with a context that has no deadline and waits
// at most 10 s for it.
func callWithWatchdog(call func(context.Context) error) (time.Duration, error) {
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- call(context.Background()) }()
	select {
	case err := <-done:
		return time.Since(start), err
	case <-time.After(10 * time.Second):
		return time.Since(start), errors.New("no answer after 10s")
	}
}

// TestRedisOptions: the URL's own timeouts win over AVIARY_DEPENDENCY_TIMEOUT,
// and deadlines are always honoured.
func TestRedisOptions(t *testing.T) {
	conn, err := parseRedisURL("redis://127.0.0.1:6379/2?read_timeout=2s")
	if err != nil {
		t.Fatal(err)
	}
	d := 300 * time.Millisecond
	conn.bound(d)
	opts := conn.single
	if !opts.ContextTimeoutEnabled || opts.DB != 2 || opts.ReadTimeout != 2*time.Second ||
		opts.DialTimeout != d || opts.WriteTimeout != d || opts.PoolTimeout != d {
		t.Errorf("options %+v", opts)
	}
	if a, ok := conn.asynq.(asynq.RedisClientOpt); !ok || a.Addr != "127.0.0.1:6379" || a.DB != 2 || a.ReadTimeout != 2*time.Second || a.DialTimeout != 0 {
		t.Errorf("asynq options %+v: want the URL's own settings only", conn.asynq)
	}
}

// TestRedisURLForms: every AVIARY_REDIS_URL form gives go-redis and asynq
// the same servers (docs/redis.md).
func TestRedisURLForms(t *testing.T) {
	tests := []struct {
		url     string
		want    asynq.RedisConnOpt
		wantErr string
	}{
		{url: "redis://:pw@10.0.0.1:6380/3", want: asynq.RedisClientOpt{Network: "tcp", Addr: "10.0.0.1:6380", Password: "pw", DB: 3}},
		{url: "redis://u:pw@10.0.0.1:6380", want: asynq.RedisClientOpt{Network: "tcp", Addr: "10.0.0.1:6380", Username: "u", Password: "pw"}},
		{url: "redis-sentinel://:spw@10.0.0.1:26379,10.0.0.2:26379,10.0.0.3:26379/4?master=mymaster&password=pw&dial_timeout=2s",
			want: asynq.RedisFailoverClientOpt{MasterName: "mymaster", SentinelAddrs: []string{"10.0.0.1:26379", "10.0.0.2:26379", "10.0.0.3:26379"},
				SentinelPassword: "spw", Password: "pw", DB: 4, DialTimeout: 2 * time.Second}},
		{url: "redis-sentinel://10.0.0.1:26379?master_name=m", want: asynq.RedisFailoverClientOpt{MasterName: "m", SentinelAddrs: []string{"10.0.0.1:26379"}}},
		{url: "redis-cluster://10.0.0.1:7000,10.0.0.2:7000,10.0.0.3:7000", want: asynq.RedisClusterClientOpt{Addrs: []string{"10.0.0.1:7000", "10.0.0.2:7000", "10.0.0.3:7000"}}},
		{url: "redis-cluster://:pw@10.0.0.1:7000,10.0.0.2:7000/0?max_redirects=5",
			want: asynq.RedisClusterClientOpt{Addrs: []string{"10.0.0.1:7000", "10.0.0.2:7000"}, Password: "pw", MaxRedirects: 5}},
		{url: "redis-sentinel://10.0.0.1:26379,10.0.0.2:26379", wantErr: "master's name is missing"},
		{url: "redis-cluster://10.0.0.1:7000/2", wantErr: "only database 0"},
		{url: "redis-cluster://10.0.0.1:7000,,10.0.0.2:7000", wantErr: "empty address"},
		{url: "redis-cluster://10.0.0.1:7000?bogus=1", wantErr: "unexpected option"},
		{url: "memcache://10.0.0.1", wantErr: "unknown scheme"},
		{url: "10.0.0.1:6379", wantErr: "no scheme"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			conn, err := parseRedisURL(tt.url)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v; want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(conn.asynq, tt.want) {
				t.Errorf("asynq option\n%#v\nwant\n%#v", conn.asynq, tt.want)
			}
			conn.bound(time.Second)
			rc := conn.client()
			defer rc.Close()
			switch want := tt.want.(type) {
			case asynq.RedisFailoverClientOpt:
				if conn.failover == nil || conn.failover.MasterName != want.MasterName || !conn.failover.ContextTimeoutEnabled {
					t.Errorf("failover options %+v", conn.failover)
				}
			case asynq.RedisClusterClientOpt:
				if _, ok := rc.(*redis.ClusterClient); !ok || !reflect.DeepEqual(conn.cluster.Addrs, want.Addrs) || conn.cluster.ReadTimeout != time.Second {
					t.Errorf("cluster client %T options %+v", rc, conn.cluster)
				}
			}
		})
	}
}

// TestDependencyTimeoutSetting: AVIARY_DEPENDENCY_TIMEOUT defaults to 500ms
// and must be a positive duration.
func TestDependencyTimeoutSetting(t *testing.T) {
	tests := []struct {
		env     string
		want    time.Duration
		wantErr string
	}{
		{"", 500 * time.Millisecond, ""},
		{"2s", 2 * time.Second, ""},
		{"0s", 0, "AVIARY_DEPENDENCY_TIMEOUT (-dependency-timeout) must be a positive duration"},
		{"-1s", 0, "AVIARY_DEPENDENCY_TIMEOUT"},
		{"500", 0, `AVIARY_DEPENDENCY_TIMEOUT="500"`},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			clearConfigEnv(t, map[string]string{"AVIARY_DEPENDENCY_TIMEOUT": tt.env})
			cfg, _, err := parseFlags("api", nil, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v; want one mentioning %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || cfg.DependencyTimeout != tt.want {
				t.Fatalf("DependencyTimeout %v (%v); want %v", cfg.DependencyTimeout, err, tt.want)
			}
		})
	}
}

// TestOpenDatabaseWaitsForTheDatabase: at start, a database that does not
// answer yet (here a frozen proxy: connections time out) is waited for
// while it comes up within the wait; one that never answers gives up with
// storage.ErrUnavailable at the end of the wait; a refusal that is not an
// outage (an unknown database) ends at once.
func TestOpenDatabaseWaitsForTheDatabase(t *testing.T) {
	_, dbURL := storagetest.NewDB(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	px := storagetest.NewProxy(t, u.Host)
	u.Host = px.Addr()
	opts := postgres.Options{ConnectTimeout: 200 * time.Millisecond}
	ctx := context.Background()

	px.Freeze()
	thawed := make(chan struct{})
	go func() { time.Sleep(700 * time.Millisecond); px.Thaw(); close(thawed) }()
	db, err := openDatabase(ctx, u.String(), opts, 10*time.Second)
	if err != nil {
		t.Fatalf("a database answering after 700 ms: %v", err)
	}
	select {
	case <-thawed:
	default:
		t.Error("opened before the database answered")
	}
	db.Close()

	px.Freeze()
	if _, err := openDatabase(ctx, u.String(), opts, time.Second); !errors.Is(err, storage.ErrUnavailable) {
		t.Errorf("a database that never answers: %v; want storage.ErrUnavailable", err)
	}
	px.Thaw()

	missing := *u
	missing.Path = "/aviary_no_such_database"
	if _, err := openDatabase(ctx, missing.String(), opts, time.Minute); err == nil || errors.Is(err, storage.ErrUnavailable) {
		t.Errorf("an unknown database: %v; want a refusal that is not an outage", err)
	}
}
