// Package adsx is the advertising API's kit, shared by every feature under
// api/ads: how parameters arrive (query string and form body, parsed with
// their names echoed in request.params), the list conventions (count,
// cursor, sort_by, with_deleted, with_total_count, id-list filters), the
// {request, data, next_cursor, total_count} envelope, the ads error codes,
// and account authorization (the account in the path must be associated
// with the authenticated user and live on the listener's side: sandbox or
// production). See docs/ads-conventions.md.
package adsx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/internal/logctx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/tasks"
)

// AccountStore finds the accounts a user may use.
type AccountStore interface {
	// AdAccountFor returns the account if userID may use it and it is on
	// the given side (sandbox or production), deleted or not; else
	// storage.ErrNotFound.
	AdAccountFor(ctx context.Context, userID int64, accountID string, sandbox bool) (storage.AdAccount, error)
}

// Kit is what every ads feature module is given: the account check, the
// cursor signer and the queue.
type Kit struct {
	Accounts AccountStore
	Cursors  *Cursors
	// Queue receives the tasks of recorded work (batches, checks); nil
	// leaves them to the workers' sweepers.
	Queue  tasks.Enqueuer
	Logger *slog.Logger
}

// Enqueue hands the task of work already recorded to the queue so it
// starts at once (tasks.EnqueueRecorded): a failure leaves the record to
// the feature's sweeper, nothing recorded is lost.
func (k Kit) Enqueue(ctx context.Context, task *asynq.Task) {
	tasks.EnqueueRecorded(ctx, k.Queue, k.Logger, "recorded work", func() (*asynq.Task, error) { return task, nil }, "task", task.Type())
}

// Log is the kit's Logger, or slog.Default() when it is unset.
func (k Kit) Log() *slog.Logger { return logctx.OrDefault(k.Logger) }

type sandboxKey struct{}

// WithSandbox marks a request as served by the sandbox listener.
func WithSandbox(ctx context.Context) context.Context {
	return context.WithValue(ctx, sandboxKey{}, true)
}

// Sandbox reports whether the request came to the sandbox listener.
func Sandbox(ctx context.Context) bool {
	v, _ := ctx.Value(sandboxKey{}).(bool)
	return v
}

// Auth is the requirement of every ads endpoint: OAuth 1.0a user context
// (the platform's ads API takes no bearer tokens).
var Auth = auth.OAuth1Only

// AuthWrites is Auth for endpoints that change data.
var AuthWrites = auth.OAuth1Only.Writes()

// Account is the account named by the path value account_id, if the caller
// may use it on this listener and it is not deleted. Any other id (missing,
// another user's, the other listener's, deleted) gets the same
// AccountNotFound, so ids cannot be probed.
func (k Kit) Account(r *http.Request) (storage.AdAccount, error) {
	a, err := k.AccountWithDeleted(r)
	if err == nil && a.Deleted {
		return storage.AdAccount{}, AccountNotFound(a.ID)
	}
	return a, err
}

// AccountWithDeleted is Account that also returns a deleted account.
func (k Kit) AccountWithDeleted(r *http.Request) (storage.AdAccount, error) {
	id := r.PathValue("account_id")
	p := httpx.Principal(r)
	if p.User == nil || id == "" {
		return storage.AdAccount{}, AccountNotFound(id)
	}
	a, err := k.Accounts.AdAccountFor(r.Context(), p.User.ID, id, Sandbox(r.Context()))
	if errors.Is(err, storage.ErrNotFound) {
		return storage.AdAccount{}, AccountNotFound(id)
	}
	if err != nil {
		return storage.AdAccount{}, fmt.Errorf("load ad account %s: %w", id, err)
	}
	return a, nil
}

// UserID is the authenticated user's id (ads endpoints are user context).
func UserID(r *http.Request) int64 {
	if u := httpx.Principal(r).User; u != nil {
		return u.ID
	}
	return 0
}

// Deps are an ads feature module's dependencies: the kit and the
// feature's own store (errors are logged where they are rendered).
type Deps[S any] struct {
	Kit   Kit
	Store S
}
