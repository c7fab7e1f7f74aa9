package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	apiusage "github.com/aviary-dev/aviary/api/usage"
)

// usageConfig is AVIARY_USAGE_* (docs/usage-and-credits.md).
type usageConfig struct {
	ReadCap, WriteCap int
	ResetDay          int
	Prices            string
	FlushInterval     time.Duration
}

// prices parses Prices: comma-separated resource=credits pairs.
func (u usageConfig) prices() (apiusage.Prices, error) {
	var p apiusage.Prices
	for _, pair := range strings.Split(u.Prices, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		name, raw, ok := strings.Cut(pair, "=")
		n, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
		if !ok || err != nil || n < 0 {
			return p, fmt.Errorf("usage price %q: want resource=credits (0 or more)", pair)
		}
		switch strings.TrimSpace(name) {
		case "post_read":
			p.PostRead = n
		case "post_write":
			p.PostWrite = n
		case "user_read":
			p.UserRead = n
		default:
			return p, fmt.Errorf("usage price %q: unknown resource (post_read, post_write, user_read)", pair)
		}
	}
	return p, nil
}

func (u usageConfig) pricesValid() bool {
	_, err := u.prices()
	return err == nil
}

// startUsageMeter builds the usage meter on the backends and records its
// counts in PostgreSQL while the process runs (and once more when it stops).
func startUsageMeter(cfg *config, b *backends, errs apierr.Writer, log *slog.Logger) *apiusage.Meter {
	prices, _ := cfg.Usage.prices() // validated with the configuration
	m := apiusage.New(apiusage.Config{ReadCap: int64(cfg.Usage.ReadCap), WriteCap: int64(cfg.Usage.WriteCap),
		CapResetDay: cfg.Usage.ResetDay, Prices: prices, FlushInterval: cfg.Usage.FlushInterval},
		apiusage.Deps{Store: b.apiDB, Redis: b.redis, Prefix: "aviary:", Errors: errs, Logger: log})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Run(ctx)
	}()
	b.closers = append(b.closers, func() { cancel(); <-done })
	return m
}
