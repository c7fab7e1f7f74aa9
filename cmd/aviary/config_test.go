package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// clearConfigEnv unsets (empties) every AVIARY_* setting for the test, so
// the machine's environment cannot leak in; env is then applied.
func clearConfigEnv(t *testing.T, env map[string]string) {
	t.Helper()
	for _, s := range (&config{}).settings() {
		t.Setenv(s.env, "")
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
}

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		wantErr []string             // substrings of the error; nil means success
		check   func(*config) string // "" when the parsed config is as expected
	}{
		{name: "defaults", check: func(c *config) string {
			if c.ShutdownTimeout != 30*time.Second || !c.Reconcile || c.ReconcileInterval != 2*time.Second ||
				c.WorkerConcurrency != 8 || c.HTTPReadTimeout != 30*time.Minute || c.RateLimitScale != 1 ||
				!c.S3Watch || c.AdminUser != "admin" || c.HTTPAddr != ":8080" {
				return "unexpected defaults"
			}
			return ""
		}},
		{name: "replay horizon", check: func(c *config) string {
			if c.WebhookReplayMaxAge != 24*time.Hour || c.replayHorizon() != 24*time.Hour {
				return "replay horizon default is not 24h"
			}
			return ""
		}},
		{name: "replay horizon capped by the events retention", env: map[string]string{"AVIARY_WEBHOOK_REPLAY_MAX_AGE": "48h",
			"AVIARY_EVENTS_RETENTION": "2h"}, check: func(c *config) string {
			if c.replayHorizon() != 2*time.Hour {
				return "replay horizon not capped by the retention"
			}
			return ""
		}},
		{name: "replay horizon must be positive", env: map[string]string{"AVIARY_WEBHOOK_REPLAY_MAX_AGE": "0s"},
			wantErr: []string{"AVIARY_WEBHOOK_REPLAY_MAX_AGE"}},
		{name: "environment applies", env: map[string]string{"AVIARY_RECONCILE": "false", "AVIARY_SHUTDOWN_TIMEOUT": "1m",
			"AVIARY_HTTP_READ_TIMEOUT": "5m", "AVIARY_WORKER_CONCURRENCY": "3", "AVIARY_RATE_LIMIT_SCALE": "0.5", "AVIARY_S3_WATCH": "0"},
			check: func(c *config) string {
				if c.Reconcile || c.ShutdownTimeout != time.Minute || c.HTTPReadTimeout != 5*time.Minute ||
					c.WorkerConcurrency != 3 || c.RateLimitScale != 0.5 || c.S3Watch {
					return "environment not applied"
				}
				return ""
			}},
		{name: "empty variable counts as unset", env: map[string]string{"AVIARY_SHUTDOWN_TIMEOUT": "", "AVIARY_ADMIN_USER": ""},
			check: func(c *config) string {
				if c.ShutdownTimeout != 30*time.Second || c.AdminUser != "admin" {
					return "empty variables were not ignored"
				}
				return ""
			}},
		{name: "flag overrides environment", env: map[string]string{"AVIARY_SHUTDOWN_TIMEOUT": "1m"}, args: []string{"-shutdown-timeout", "5s"},
			check: func(c *config) string {
				if c.ShutdownTimeout != 5*time.Second {
					return "flag did not override"
				}
				return ""
			}},
		{name: "read timeout 0 disables it", env: map[string]string{"AVIARY_HTTP_READ_TIMEOUT": "0"},
			check: func(c *config) string {
				if c.HTTPReadTimeout != 0 {
					return "read timeout not 0"
				}
				return ""
			}},

		{name: "boolean yes", env: map[string]string{"AVIARY_RECONCILE": "yes"}, wantErr: []string{`AVIARY_RECONCILE="yes"`, "true or false"}},
		{name: "duration without unit", env: map[string]string{"AVIARY_SHUTDOWN_TIMEOUT": "30"}, wantErr: []string{`AVIARY_SHUTDOWN_TIMEOUT="30"`, "duration"}},
		{name: "read timeout without unit", env: map[string]string{"AVIARY_HTTP_READ_TIMEOUT": "30"}, wantErr: []string{`AVIARY_HTTP_READ_TIMEOUT="30"`}},
		{name: "integer word", env: map[string]string{"AVIARY_WORKER_CONCURRENCY": "eight"}, wantErr: []string{`AVIARY_WORKER_CONCURRENCY="eight"`, "integer"}},
		{name: "number word", env: map[string]string{"AVIARY_RATE_LIMIT_SCALE": "fast"}, wantErr: []string{`AVIARY_RATE_LIMIT_SCALE="fast"`, "number"}},
		{name: "bad variable fails even if a flag is given", env: map[string]string{"AVIARY_RECONCILE": "on"}, args: []string{"-reconcile=false"},
			wantErr: []string{`AVIARY_RECONCILE="on"`}},
		{name: "zero shutdown timeout", env: map[string]string{"AVIARY_SHUTDOWN_TIMEOUT": "0s"}, wantErr: []string{"AVIARY_SHUTDOWN_TIMEOUT", "positive"}},
		{name: "negative shutdown timeout", env: map[string]string{"AVIARY_SHUTDOWN_TIMEOUT": "-5s"}, wantErr: []string{"AVIARY_SHUTDOWN_TIMEOUT", "-5s"}},
		{name: "zero reconcile interval", env: map[string]string{"AVIARY_RECONCILE_INTERVAL": "0"}, wantErr: []string{"AVIARY_RECONCILE_INTERVAL", "positive"}},
		{name: "negative read timeout", env: map[string]string{"AVIARY_HTTP_READ_TIMEOUT": "-1s"}, wantErr: []string{"AVIARY_HTTP_READ_TIMEOUT"}},
		{name: "negative drain delay", env: map[string]string{"AVIARY_DRAIN_DELAY": "-1s"}, wantErr: []string{"AVIARY_DRAIN_DELAY"}},
		{name: "drain delay applies", env: map[string]string{"AVIARY_DRAIN_DELAY": "5s"},
			check: func(c *config) string {
				if c.DrainDelay != 5*time.Second {
					return "drain delay not 5s"
				}
				return ""
			}},
		{name: "zero concurrency", env: map[string]string{"AVIARY_WORKER_CONCURRENCY": "0"}, wantErr: []string{"AVIARY_WORKER_CONCURRENCY", "at least 1"}},
		{name: "zero concurrency by flag", args: []string{"-concurrency=0"}, wantErr: []string{"-concurrency", "at least 1"}},
		{name: "24-hour post limits: documented defaults", check: func(c *config) string {
			if c.PostsAppPerDay != 10000 || c.PostsUserPerDay != 2400 {
				return "24-hour post limits are not 10000 per app, 2400 per user"
			}
			return ""
		}},
		{name: "24-hour post limits: set", env: map[string]string{"AVIARY_POSTS_APP_24H_LIMIT": "50"}, args: []string{"-posts-user-24h-limit", "17"},
			check: func(c *config) string {
				if c.PostsAppPerDay != 50 || c.PostsUserPerDay != 17 {
					return "24-hour post limits not applied"
				}
				return ""
			}},
		{name: "zero 24-hour post limit", env: map[string]string{"AVIARY_POSTS_USER_24H_LIMIT": "0"}, wantErr: []string{"AVIARY_POSTS_USER_24H_LIMIT", "at least 1"}},
		{name: "negative rate-limit scale", env: map[string]string{"AVIARY_RATE_LIMIT_SCALE": "-1"}, wantErr: []string{"AVIARY_RATE_LIMIT_SCALE", "positive"}},
		{name: "NaN rate-limit scale", env: map[string]string{"AVIARY_RATE_LIMIT_SCALE": "NaN"}, wantErr: []string{"AVIARY_RATE_LIMIT_SCALE"}},
		{name: "infinite rate-limit scale", env: map[string]string{"AVIARY_RATE_LIMIT_SCALE": "+Inf"}, wantErr: []string{"AVIARY_RATE_LIMIT_SCALE"}},
		{name: "webhook deliveries: documented defaults", check: func(c *config) string {
			if c.WebhookDeliveryAttempts != 5 || c.WebhookRetryBackoff != 10*time.Second || c.WebhookProbeInterval != time.Minute ||
				c.WebhookDeliveryTimeout != 10*time.Second || c.WebhookDeliverers != 16 {
				return "webhook delivery defaults are not 5 attempts, 10s backoff, 1m probes, 10s timeout, 16 deliverers"
			}
			return ""
		}},
		{name: "webhook deliveries: set", env: map[string]string{"AVIARY_WEBHOOK_DELIVERY_ATTEMPTS": "3", "AVIARY_WEBHOOK_RETRY_BACKOFF": "2s",
			"AVIARY_WEBHOOK_PROBE_INTERVAL": "30s", "AVIARY_WEBHOOK_DELIVERY_TIMEOUT": "4s"}, args: []string{"-webhook-deliverers", "2"},
			check: func(c *config) string {
				if c.WebhookDeliveryAttempts != 3 || c.WebhookRetryBackoff != 2*time.Second || c.WebhookProbeInterval != 30*time.Second ||
					c.WebhookDeliveryTimeout != 4*time.Second || c.WebhookDeliverers != 2 {
					return "webhook delivery settings not applied"
				}
				return ""
			}},
		{name: "zero webhook delivery attempts", env: map[string]string{"AVIARY_WEBHOOK_DELIVERY_ATTEMPTS": "0"}, wantErr: []string{"AVIARY_WEBHOOK_DELIVERY_ATTEMPTS", "at least 1"}},
		{name: "zero webhook retry backoff", env: map[string]string{"AVIARY_WEBHOOK_RETRY_BACKOFF": "0s"}, wantErr: []string{"AVIARY_WEBHOOK_RETRY_BACKOFF", "positive"}},
		{name: "zero webhook probe interval", env: map[string]string{"AVIARY_WEBHOOK_PROBE_INTERVAL": "0s"}, wantErr: []string{"AVIARY_WEBHOOK_PROBE_INTERVAL", "positive"}},
		{name: "zero webhook delivery timeout", env: map[string]string{"AVIARY_WEBHOOK_DELIVERY_TIMEOUT": "0s"}, wantErr: []string{"AVIARY_WEBHOOK_DELIVERY_TIMEOUT", "positive"}},
		{name: "zero webhook deliverers", env: map[string]string{"AVIARY_WEBHOOK_DELIVERERS": "0"}, wantErr: []string{"AVIARY_WEBHOOK_DELIVERERS", "at least 1"}},
		{name: "every invalid value is reported", env: map[string]string{"AVIARY_SHUTDOWN_TIMEOUT": "-1s", "AVIARY_WORKER_CONCURRENCY": "-2"},
			wantErr: []string{"AVIARY_SHUTDOWN_TIMEOUT", "AVIARY_WORKER_CONCURRENCY"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearConfigEnv(t, tt.env)
			cfg, _, err := parseFlags("api", tt.args, io.Discard)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("parseFlags: %v", err)
				}
				if problem := tt.check(cfg); problem != "" {
					t.Errorf("%s: %+v", problem, cfg)
				}
				return
			}
			if err == nil {
				t.Fatalf("parseFlags succeeded with %+v; want an error mentioning %q", cfg, tt.wantErr)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
}

// TestEveryCommandRejectsBadConfig checks each subcommand fails at start-up
// on a malformed or invalid variable, before it opens anything (the context
// is already canceled, so a command that went on would fail differently).
func TestEveryCommandRejectsBadConfig(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	commands := [][]string{{"api"}, {"worker"}, {"dev"}, {"migrate"}, {"admin", "bootstrap"}, {"admin", "user", "create", "--username", "x"}}
	bad := []struct{ env, value, want string }{
		{"AVIARY_SHUTDOWN_TIMEOUT", "30", `AVIARY_SHUTDOWN_TIMEOUT="30"`},              // malformed
		{"AVIARY_WORKER_CONCURRENCY", "0", "AVIARY_WORKER_CONCURRENCY (-concurrency)"}, // invalid
	}
	for _, args := range commands {
		for _, b := range bad {
			t.Run(strings.Join(args, " ")+" "+b.env, func(t *testing.T) {
				clearConfigEnv(t, map[string]string{b.env: b.value})
				err := run(ctx, args, io.Discard, io.Discard)
				if err == nil || !strings.Contains(err.Error(), b.want) {
					t.Errorf("run %v = %v; want an error mentioning %s", args, err, b.want)
				}
			})
		}
	}
}

func TestHTTPServerTimeouts(t *testing.T) {
	tests := []struct {
		env      string // AVIARY_HTTP_READ_TIMEOUT
		wantRead time.Duration
	}{
		{"", 30 * time.Minute},
		{"5m", 5 * time.Minute},
		{"0", 0},
	}
	for _, tt := range tests {
		t.Run("read timeout "+tt.env, func(t *testing.T) {
			clearConfigEnv(t, map[string]string{"AVIARY_HTTP_READ_TIMEOUT": tt.env})
			cfg, _, err := parseFlags("api", nil, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			srv := newHTTPServer(cfg, cfg.HTTPAddr, nil, newLogger(cfg, io.Discard))
			if srv.ReadTimeout != tt.wantRead || srv.IdleTimeout != 120*time.Second || srv.ReadHeaderTimeout != 10*time.Second {
				t.Errorf("timeouts read %v, idle %v, header %v; want %v, 2m0s, 10s", srv.ReadTimeout, srv.IdleTimeout, srv.ReadHeaderTimeout, tt.wantRead)
			}
		})
	}
}
