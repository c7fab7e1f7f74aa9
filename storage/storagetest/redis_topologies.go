package storagetest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// topologyStartTimeout bounds how long RedisCluster and RedisSentinel wait
// for their servers to form the topology.
const topologyStartTimeout = 30 * time.Second

// redisBinaries returns the paths of redis-server and redis-cli, skipping
// the test (with what to install) when either is missing: the cluster and
// Sentinel tests need real servers; dev and CI machines have them.
func redisBinaries(t testing.TB) (server, cli string) {
	t.Helper()
	server, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skipf("storagetest: redis-server is not installed (Debian/Ubuntu: apt-get install redis-server): %v", err)
	}
	cli, err = exec.LookPath("redis-cli")
	if err != nil {
		t.Skipf("storagetest: redis-cli is not installed (Debian/Ubuntu: apt-get install redis-tools): %v", err)
	}
	return server, cli
}

// redisNode is one redis-server (or sentinel) process of a topology.
type redisNode struct {
	Addr   string
	cmd    *exec.Cmd
	output *bytes.Buffer
	mu     sync.Mutex
	dead   bool
}

// startNode runs bin with args (which must make it listen on addr), ended
// by kill, and waits until it answers PING.
func startNode(ctx context.Context, bin, addr string, args ...string) (*redisNode, error) {
	n := &redisNode{Addr: addr, output: &bytes.Buffer{}}
	n.cmd = exec.Command(bin, args...)
	n.cmd.Stdout, n.cmd.Stderr = n.output, n.output
	n.cmd.SysProcAttr = minioSysProcAttr()
	if err := n.cmd.Start(); err != nil {
		return nil, fmt.Errorf("run %s: %w", bin, err)
	}
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	for {
		err := c.Ping(ctx).Err()
		if err == nil {
			return n, nil
		}
		if sleep(ctx, 50*time.Millisecond) != nil {
			n.kill()
			return nil, fmt.Errorf("%s on %s did not answer: %w; it said: %s", bin, addr, err, n.output.String())
		}
	}
}

// kill ends the process with SIGKILL (nothing is saved); safe to repeat.
func (n *redisNode) kill() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.dead {
		return
	}
	n.dead = true
	_ = n.cmd.Process.Kill()
	_ = n.cmd.Wait()
}

func loopbackAddr() (string, error) {
	p, err := freePort()
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(p)), nil
}

func portOf(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// waitFor polls cond every 100ms until it holds or ctx ends.
func waitFor(ctx context.Context, what string, cond func(context.Context) (bool, error)) error {
	var last error
	for {
		ok, err := cond(ctx)
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		if sleep(ctx, 100*time.Millisecond) != nil {
			return fmt.Errorf("%s: not within %v (last error: %v)", what, topologyStartTimeout, last)
		}
	}
}

// RedisClusterNodes is a Redis Cluster of three masters (no replicas) on
// free loopback ports, started by RedisCluster.
type RedisClusterNodes struct {
	// Addrs are the masters' host:port.
	Addrs []string
}

// URL is the cluster's AVIARY_REDIS_URL (docs/redis.md).
func (c *RedisClusterNodes) URL() string { return "redis-cluster://" + strings.Join(c.Addrs, ",") }

// Client returns a cluster client, closed when the test ends.
func (c *RedisClusterNodes) Client(t testing.TB) *redis.ClusterClient {
	rc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
	t.Cleanup(func() { _ = rc.Close() })
	return rc
}

// RedisCluster starts three redis-server processes in cluster mode in a
// temporary directory, joins them with `redis-cli --cluster create` (every
// slot assigned, no replicas), waits until every node reports the cluster
// ok, and kills them when the test ends. It persists nothing. Without
// redis-server the test is skipped.
func RedisCluster(t testing.TB) *RedisClusterNodes {
	t.Helper()
	server, cli := redisBinaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), topologyStartTimeout)
	defer cancel()
	dir := t.TempDir()
	c := &RedisClusterNodes{}
	for i := 0; i < 3; i++ {
		n, err := startClusterNode(ctx, server, dir)
		if err != nil {
			t.Fatalf("storagetest: start cluster node: %v", err)
		}
		t.Cleanup(n.kill)
		c.Addrs = append(c.Addrs, n.Addr)
	}
	create := exec.CommandContext(ctx, cli, append(append([]string{"--cluster", "create"}, c.Addrs...), "--cluster-replicas", "0", "--cluster-yes")...)
	if out, err := create.CombinedOutput(); err != nil {
		t.Fatalf("storagetest: redis-cli --cluster create: %v\n%s", err, out)
	}
	for _, addr := range c.Addrs {
		node := redis.NewClient(&redis.Options{Addr: addr})
		err := waitFor(ctx, "cluster ok on "+addr, func(ctx context.Context) (bool, error) {
			info, err := node.ClusterInfo(ctx).Result()
			return strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_slots_ok:16384") &&
				strings.Contains(info, "cluster_known_nodes:3"), err
		})
		node.Close()
		if err != nil {
			t.Fatalf("storagetest: %v", err)
		}
	}
	return c
}

// startClusterNode starts one cluster-enabled server on a free port whose
// cluster bus port (+10000) is free too, trying a few ports.
func startClusterNode(ctx context.Context, server, dir string) (*redisNode, error) {
	var last error
	for attempt := 0; attempt < 5; attempt++ {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		if p+10000 > 65535 || !portFree(p+10000) {
			continue
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
		n, err := startNode(ctx, server, addr, "--port", strconv.Itoa(p), "--bind", "127.0.0.1",
			"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(dir, "nodes-"+strconv.Itoa(p)+".conf"),
			"--cluster-node-timeout", "2000", "--dir", dir, "--appendonly", "no", "--save", "",
			"--daemonize", "no", "--loglevel", "warning")
		if err == nil {
			return n, nil
		}
		last = err
	}
	return nil, fmt.Errorf("no usable port pair: %w", last)
}

func portFree(p int) bool {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

// SentinelMaster is the master name RedisSentinel's sentinels monitor.
const SentinelMaster = "aviary"

// RedisSentinelSet is a primary, its replica and three sentinels (quorum
// two) on free loopback ports, started by RedisSentinel. The sentinels
// take the primary for down after one second without an answer.
type RedisSentinelSet struct {
	// Primary and Replica are the data servers as started; after a
	// failover Replica is the primary.
	Primary, Replica string
	// Sentinels are the sentinels' host:port.
	Sentinels []string

	primary *redisNode
}

// URL is the set's AVIARY_REDIS_URL (docs/redis.md), database db.
func (s *RedisSentinelSet) URL(db int) string {
	return fmt.Sprintf("redis-sentinel://%s/%d?master=%s", strings.Join(s.Sentinels, ","), db, SentinelMaster)
}

// Client returns a failover client on the set, closed when the test ends.
func (s *RedisSentinelSet) Client(t testing.TB) *redis.Client {
	rc := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: SentinelMaster, SentinelAddrs: s.Sentinels})
	t.Cleanup(func() { _ = rc.Close() })
	return rc
}

// KillPrimary ends the primary with SIGKILL (it does not come back) and
// returns when it was killed.
func (s *RedisSentinelSet) KillPrimary() time.Time {
	s.primary.kill()
	return time.Now()
}

// MasterAddr is the primary's address as the first sentinel that answers
// reports it.
func (s *RedisSentinelSet) MasterAddr(ctx context.Context) (string, error) {
	var last error
	for _, a := range s.Sentinels {
		sc := redis.NewSentinelClient(&redis.Options{Addr: a, DialTimeout: time.Second})
		addr, err := sc.GetMasterAddrByName(ctx, SentinelMaster).Result()
		sc.Close()
		if err == nil && len(addr) == 2 {
			return net.JoinHostPort(addr[0], addr[1]), nil
		}
		last = err
	}
	return "", fmt.Errorf("no sentinel named the primary: %w", last)
}

// WaitPromoted waits until the sentinels name the replica as primary and
// it accepts writes, and returns when that was first seen.
func (s *RedisSentinelSet) WaitPromoted(ctx context.Context) (time.Time, error) {
	rc := redis.NewClient(&redis.Options{Addr: s.Replica, MaxRetries: -1})
	defer rc.Close()
	err := waitFor(ctx, "replica promoted", func(ctx context.Context) (bool, error) {
		addr, err := s.MasterAddr(ctx)
		if err != nil || addr != s.Replica {
			return false, err
		}
		role, err := rc.Do(ctx, "ROLE").Slice()
		return err == nil && len(role) > 0 && role[0] == "master", err
	})
	return time.Now(), err
}

// RedisSentinel starts a primary, a replica of it and three sentinels
// (`redis-server --sentinel`) in a temporary directory, waits until the
// replica is in sync and every sentinel knows the replica and the other
// two sentinels (so a failover can be voted at once), and kills them all
// when the test ends. Without redis-server the test is skipped.
func RedisSentinel(t testing.TB) *RedisSentinelSet {
	t.Helper()
	server, _ := redisBinaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), topologyStartTimeout)
	defer cancel()
	dir := t.TempDir()
	s := &RedisSentinelSet{}
	data := func(extra ...string) *redisNode {
		addr, err := loopbackAddr()
		if err != nil {
			t.Fatalf("storagetest: %v", err)
		}
		args := append([]string{"--port", portOf(addr), "--bind", "127.0.0.1", "--dir", dir, "--appendonly", "no",
			"--save", "", "--daemonize", "no", "--loglevel", "warning", "--dbfilename", "dump-" + portOf(addr) + ".rdb"}, extra...)
		n, err := startNode(ctx, server, addr, args...)
		if err != nil {
			t.Fatalf("storagetest: start redis-server: %v", err)
		}
		t.Cleanup(n.kill)
		return n
	}
	s.primary = data()
	s.Primary = s.primary.Addr
	s.Replica = data("--replicaof", "127.0.0.1", portOf(s.Primary)).Addr
	for i := 0; i < 3; i++ {
		n, err := startSentinel(ctx, server, dir, s.Primary)
		if err != nil {
			t.Fatalf("storagetest: start sentinel: %v", err)
		}
		t.Cleanup(n.kill)
		s.Sentinels = append(s.Sentinels, n.Addr)
	}
	if err := s.waitFormed(ctx); err != nil {
		t.Fatalf("storagetest: %v", err)
	}
	return s
}

func startSentinel(ctx context.Context, server, dir, primary string) (*redisNode, error) {
	addr, err := loopbackAddr()
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "sentinel-"+portOf(addr)+".conf")
	body := fmt.Sprintf("port %s\nbind 127.0.0.1\ndir %s\nsentinel monitor %s 127.0.0.1 %s 2\n"+
		"sentinel down-after-milliseconds %[3]s 1000\nsentinel failover-timeout %[3]s 5000\nsentinel parallel-syncs %[3]s 1\n",
		portOf(addr), dir, SentinelMaster, portOf(primary))
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		return nil, fmt.Errorf("write sentinel config: %w", err)
	}
	return startNode(ctx, server, addr, conf, "--sentinel", "--daemonize", "no", "--loglevel", "warning")
}

// waitFormed waits for the replica's link and for every sentinel to know
// the replica and both other sentinels.
func (s *RedisSentinelSet) waitFormed(ctx context.Context) error {
	rc := redis.NewClient(&redis.Options{Addr: s.Replica})
	defer rc.Close()
	err := waitFor(ctx, "replica in sync", func(ctx context.Context) (bool, error) {
		info, err := rc.Info(ctx, "replication").Result()
		return strings.Contains(info, "master_link_status:up"), err
	})
	if err != nil {
		return err
	}
	for _, a := range s.Sentinels {
		sc := redis.NewSentinelClient(&redis.Options{Addr: a})
		err := waitFor(ctx, "sentinel "+a+" knows the set", func(ctx context.Context) (bool, error) {
			others, err := sc.Sentinels(ctx, SentinelMaster).Result()
			if err != nil {
				return false, err
			}
			replicas, err := sc.Replicas(ctx, SentinelMaster).Result()
			return len(others) == 2 && len(replicas) == 1, err
		})
		sc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
