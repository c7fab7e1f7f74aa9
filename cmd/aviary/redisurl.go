package main

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// redisConn is AVIARY_REDIS_URL parsed (docs/redis.md): the go-redis
// options of the one topology it names (exactly one of single, failover,
// cluster is set) and asynq's connection option for the same servers.
type redisConn struct {
	single   *redis.Options
	failover *redis.FailoverOptions
	cluster  *redis.ClusterOptions
	asynq    asynq.RedisConnOpt
}

// parseRedisURL reads the four forms of AVIARY_REDIS_URL:
//
//	redis://[user:pass@]host:port[/db][?option=value...]   one server (rediss:// with TLS, unix:///path.sock)
//	redis-sentinel://[user:pass@]host:port,host:port[/db]?master=name[&password=...]
//	redis-cluster://[user:pass@]host:port,host:port,host:port[?option=value...]
//
// Options are go-redis' URL options (dial_timeout, read_timeout,
// pool_size, ...). With Sentinel the user information is the sentinels'
// credentials (as asynq and go-redis read it) and the query's username and
// password the Redis servers'. The sentinel and cluster forms are turned
// into go-redis' own URL forms (the first address as the host, the others
// as addr= options) and parsed by it.
func parseRedisURL(raw string) (redisConn, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return redisConn{}, fmt.Errorf("parse AVIARY_REDIS_URL: no scheme (want redis://, rediss://, redis-sentinel:// or redis-cluster://)")
	}
	switch scheme {
	case "redis", "rediss", "unix":
		o, err := redis.ParseURL(raw)
		if err != nil {
			return redisConn{}, fmt.Errorf("parse AVIARY_REDIS_URL: %w", err)
		}
		return redisConn{single: o, asynq: asynq.RedisClientOpt{Network: o.Network, Addr: o.Addr, Username: o.Username,
			Password: o.Password, DB: o.DB, DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout,
			WriteTimeout: o.WriteTimeout, PoolSize: o.PoolSize, TLSConfig: o.TLSConfig}}, nil
	case "redis-sentinel", "rediss-sentinel":
		return parseSentinelURL(strings.TrimSuffix(scheme, "-sentinel"), rest)
	case "redis-cluster", "rediss-cluster":
		return parseClusterURL(strings.TrimSuffix(scheme, "-cluster"), rest)
	}
	return redisConn{}, fmt.Errorf("parse AVIARY_REDIS_URL: unknown scheme %q (want redis, rediss, unix, redis-sentinel or redis-cluster)", scheme)
}

// multiHostURL rewrites scheme://[userinfo@]h1,h2,...[/path][?query] into
// go-redis' form scheme://[userinfo@]h1[/path]?query&addr=h2&addr=..., with
// rename applied to the query's keys (an alias to go-redis' name).
func multiHostURL(scheme, rest string, rename map[string]string) (string, error) {
	authority, tail := rest, ""
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		authority, tail = rest[:i], rest[i:]
	}
	userinfo, hostlist := "", authority
	if i := strings.LastIndex(authority, "@"); i >= 0 {
		userinfo, hostlist = authority[:i+1], authority[i+1:]
	}
	hosts := strings.Split(hostlist, ",")
	for _, h := range hosts {
		if h == "" {
			return "", fmt.Errorf("empty address in %q", hostlist)
		}
	}
	path, query, _ := strings.Cut(tail, "?")
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", fmt.Errorf("query: %w", err)
	}
	for from, to := range rename {
		if v, ok := q[from]; ok {
			q[to] = append(q[to], v...)
			delete(q, from)
		}
	}
	for _, h := range hosts[1:] {
		q.Add("addr", h)
	}
	return scheme + "://" + userinfo + hosts[0] + path + "?" + q.Encode(), nil
}

func parseSentinelURL(scheme, rest string) (redisConn, error) {
	u, err := multiHostURL(scheme, rest, map[string]string{"master": "master_name"})
	if err != nil {
		return redisConn{}, fmt.Errorf("parse AVIARY_REDIS_URL (sentinel): %w", err)
	}
	o, err := redis.ParseFailoverURL(u)
	if err != nil {
		return redisConn{}, fmt.Errorf("parse AVIARY_REDIS_URL (sentinel): %w", err)
	}
	if o.MasterName == "" {
		return redisConn{}, fmt.Errorf("parse AVIARY_REDIS_URL (sentinel): the master's name is missing (?master=name)")
	}
	return redisConn{failover: o, asynq: asynq.RedisFailoverClientOpt{MasterName: o.MasterName,
		SentinelAddrs: o.SentinelAddrs, SentinelUsername: o.SentinelUsername, SentinelPassword: o.SentinelPassword,
		Username: o.Username, Password: o.Password, DB: o.DB, DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout,
		WriteTimeout: o.WriteTimeout, PoolSize: o.PoolSize, TLSConfig: o.TLSConfig}}, nil
}

func parseClusterURL(scheme, rest string) (redisConn, error) {
	u, err := multiHostURL(scheme, rest, nil)
	if err != nil {
		return redisConn{}, fmt.Errorf("parse AVIARY_REDIS_URL (cluster): %w", err)
	}
	if p, err := url.Parse(u); err == nil && strings.Trim(p.Path, "/0") != "" {
		return redisConn{}, fmt.Errorf("parse AVIARY_REDIS_URL (cluster): a cluster has only database 0, not %q", p.Path)
	}
	o, err := redis.ParseClusterURL(stripPath(u))
	if err != nil {
		return redisConn{}, fmt.Errorf("parse AVIARY_REDIS_URL (cluster): %w", err)
	}
	return redisConn{cluster: o, asynq: asynq.RedisClusterClientOpt{Addrs: o.Addrs, MaxRedirects: o.MaxRedirects,
		Username: o.Username, Password: o.Password, DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout,
		WriteTimeout: o.WriteTimeout, TLSConfig: o.TLSConfig}}, nil
}

// stripPath drops a URL's path ("/" or "/0" for a cluster).
func stripPath(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	p.Path, p.RawPath = "", ""
	return p.String()
}

// bound makes go-redis honour context deadlines (the limiter's, the nonce
// check's, readiness') and gives each dial, read, write and pool wait d
// unless the URL set its own (dial_timeout=..., read_timeout=...).
func (c redisConn) bound(d time.Duration) {
	var enabled *bool
	var timeouts []*time.Duration
	switch {
	case c.single != nil:
		o := c.single
		enabled, timeouts = &o.ContextTimeoutEnabled, []*time.Duration{&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout}
	case c.failover != nil:
		o := c.failover
		enabled, timeouts = &o.ContextTimeoutEnabled, []*time.Duration{&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout}
	case c.cluster != nil:
		o := c.cluster
		enabled, timeouts = &o.ContextTimeoutEnabled, []*time.Duration{&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout}
	default:
		return
	}
	*enabled = true
	for _, t := range timeouts {
		if *t == 0 {
			*t = d
		}
	}
}

// client opens the go-redis client of the topology: a *redis.Client (one
// server, or the primary Sentinel names, followed across failovers) or a
// *redis.ClusterClient.
func (c redisConn) client() redis.UniversalClient {
	switch {
	case c.failover != nil:
		return redis.NewFailoverClient(c.failover)
	case c.cluster != nil:
		return redis.NewClusterClient(c.cluster)
	}
	return redis.NewClient(c.single)
}

// redisClient opens a client on AVIARY_REDIS_URL with every command bound
// by AVIARY_DEPENDENCY_TIMEOUT (see bound).
func redisClient(cfg *config) (redis.UniversalClient, error) {
	c, err := parseRedisURL(cfg.RedisURL)
	if err != nil {
		return nil, err
	}
	c.bound(cfg.DependencyTimeout)
	return c.client(), nil
}
