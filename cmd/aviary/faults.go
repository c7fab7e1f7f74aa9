package main

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/aviary-dev/aviary/api/admin"
	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	apifaults "github.com/aviary-dev/aviary/api/faults"
	"github.com/aviary-dev/aviary/storage/faultsredis"
)

// faultsPrefix is the Redis key prefix of the deployment's faults on
// demand (docs/faults.md): every API replica and worker of the deployment
// shares them.
const faultsPrefix = faultsredis.DefaultPrefix

// newFaults builds /_aviary/faults and its hook: app callers with their
// bearer token, admins (when AVIARY_ADMIN_PASSWORD is set) behind the
// admin guard.
func newFaults(cfg *config, b *backends, authn *auth.Authenticator, errs apierr.Writer, log *slog.Logger) (*apifaults.Module, error) {
	var guard func(http.Handler) http.Handler
	if cfg.AdminPassword != "" {
		g, err := admin.New(admin.Options{User: cfg.AdminUser, Password: cfg.AdminPassword, PublicURL: cfg.PublicURL,
			Throttle: admin.NewRedisThrottle(b.redis, "aviary:admin-login:", admin.DefaultLimits), Errors: errs, Logger: log})
		if err != nil {
			return nil, fmt.Errorf("configure /_aviary/faults: %w", err)
		}
		guard = g.Wrap
	}
	return apifaults.New(apifaults.Deps{Store: faultsStore(b), Auth: authn, Admin: guard,
		Errors: errs, Logger: log}), nil
}

// faultsStore is the deployment's faults in Redis, for the API's hook and
// the workers' CRC checks and media processing.
func faultsStore(b *backends) *faultsredis.Store { return faultsredis.New(b.redis, faultsPrefix) }
