package adsx

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/aviary-dev/aviary/storage"
)

// HandleFunc is an ads endpoint body (Route.Handle).
type HandleFunc func(w http.ResponseWriter, r *http.Request, p *Params) error

// Entity names a kind of an account's entities for the generic handlers:
// the path value that holds an id and the code of a missing one.
type Entity struct {
	PathValue    string
	NotFoundCode string
}

// Err turns a store error about entity id into the API's: a miss is a 404
// with the entity's code naming the path value.
func (e Entity) Err(id string, err error) error {
	if errors.Is(err, storage.ErrNotFound) {
		return NotFound(e.NotFoundCode, e.PathValue, id)
	}
	return fmt.Errorf("%s %s: %w", e.PathValue, id, err)
}

// List serves a list of the path account's entities: parse reads the
// endpoint's filters for the account (recording errors on p), the shared
// list parameters follow, then list loads the page and render draws each
// item.
func List[F, T, R any](k Kit, spec ListSpec, parse func(p *Params, acct storage.AdAccount) F,
	list func(ctx context.Context, f F, opts storage.ListOptions) (storage.Page[T], error),
	render func(T) R) HandleFunc {
	return func(w http.ResponseWriter, r *http.Request, p *Params) error {
		acct, err := k.Account(r)
		if err != nil {
			return err
		}
		f := parse(p, acct)
		opts := k.List(p, spec)
		if err := p.Err(); err != nil {
			return err
		}
		page, err := list(r.Context(), f, opts)
		if err != nil {
			return fmt.Errorf("list %s of account %s: %w", r.Pattern, acct.ID, err)
		}
		return WriteList(w, k, p, page, render)
	}
}

// Get serves one of the path account's entities by the id in its path
// value, taking with_deleted: a missing one, another account's, or a
// deleted one without with_deleted=true is the entity's 404.
func Get[T, R any](k Kit, e Entity, load func(ctx context.Context, accountID, id string, withDeleted bool) (T, error),
	render func(T) R) HandleFunc {
	return func(w http.ResponseWriter, r *http.Request, p *Params) error {
		acct, err := k.Account(r)
		if err != nil {
			return err
		}
		withDeleted := p.Flag("with_deleted", false)
		if err := p.Err(); err != nil {
			return err
		}
		id := r.PathValue(e.PathValue)
		v, err := load(r.Context(), acct.ID, id, withDeleted)
		if err != nil {
			return e.Err(id, err)
		}
		return WriteData(w, p, http.StatusOK, render(v))
	}
}

// Delete serves the soft delete of one of the path account's entities by
// the user: the answer is the entity with deleted true; a missing or
// already deleted one is the entity's 404.
func Delete[T, R any](k Kit, e Entity, del func(ctx context.Context, userID int64, accountID, id string) (T, error),
	render func(T) R) HandleFunc {
	return func(w http.ResponseWriter, r *http.Request, p *Params) error {
		acct, err := k.Account(r)
		if err != nil {
			return err
		}
		id := r.PathValue(e.PathValue)
		v, err := del(r.Context(), UserID(r), acct.ID, id)
		if err != nil {
			return e.Err(id, err)
		}
		return WriteData(w, p, http.StatusOK, render(v))
	}
}

// WithoutUser adapts a store delete that records no history, and so
// takes no user, to Delete.
func WithoutUser[T any](del func(ctx context.Context, accountID, id string) (T, error)) func(context.Context, int64, string, string) (T, error) {
	return func(ctx context.Context, _ int64, accountID, id string) (T, error) { return del(ctx, accountID, id) }
}
