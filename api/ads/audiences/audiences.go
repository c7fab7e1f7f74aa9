package audiences

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/tasks"
)

// codeAudienceNotFound is the platform's code of a missing audience.
const codeAudienceNotFound = "TAILORED_AUDIENCE_NOT_FOUND"

// Parameter bounds.
const (
	maxName        = 255
	maxDescription = 255
)

// RetryWindow is how long a users batch with the same Idempotency-Key (per
// account and audience), or without a key the same body as the audience's
// latest batch, is taken as a retry of the one recorded.
const RetryWindow = 24 * time.Hour

var listParams = append([]string{"custom_audience_ids", "q", "permission_scope"}, adsx.ListParams...)

// listSpec is how audience lists sort.
var listSpec = adsx.ListSpec{
	Listing:  storage.ListingCustomAudiences,
	Sortable: adsx.Sortable{"name", "audience_size", "created_at", "updated_at"},
	Default:  storage.Sort{Field: "created_at"},
}

// Lists are the module's list specs (checked against the store's columns
// by TestListSpecsMapToColumns in package api).
func (*Module) Lists() []adsx.ListSpec { return []adsx.ListSpec{listSpec} }

// entity is a custom audience in the generic handlers.
var entity = adsx.Entity{PathValue: "custom_audience_id", NotFoundCode: codeAudienceNotFound}

// parseFilter reads the list's filters.
func parseFilter(p *adsx.Params, acct storage.AdAccount) storage.CustomAudienceFilter {
	f := storage.CustomAudienceFilter{AccountID: acct.ID, AudienceIDs: p.IDs("custom_audience_ids")}
	if q := p.String("q", maxName); q != nil {
		f.NamePrefix = *q
	}
	if s := p.Enum("permission_scope", storage.AudienceScopes); s != nil {
		f.Scope = *s
	}
	return f
}

func (m *Module) create(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	n := storage.NewCustomAudience{AccountID: acct.ID, Name: p.Required("name", maxName), Description: p.String("description", maxDescription)}
	if err := p.Err(); err != nil {
		return err
	}
	v, err := m.deps.Store.CreateCustomAudience(r.Context(), n)
	if err != nil {
		return audienceErr(err, "", n.Name)
	}
	return writeView(w, p, v)
}

func (m *Module) update(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	c := storage.CustomAudienceChange{Name: p.String("name", maxName), Description: p.String("description", maxDescription)}
	if err := p.Err(); err != nil {
		return err
	}
	id := r.PathValue("custom_audience_id")
	v, err := m.deps.Store.UpdateCustomAudience(r.Context(), acct.ID, id, c)
	if err != nil {
		name := ""
		if c.Name != nil {
			name = *c.Name
		}
		return audienceErr(err, id, name)
	}
	return writeView(w, p, v)
}

func (m *Module) delete(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	id := r.PathValue("custom_audience_id")
	v, err := m.deps.Store.DeleteCustomAudience(r.Context(), acct.ID, id)
	if err != nil {
		return audienceErr(err, id, "")
	}
	return writeView(w, p, v)
}

// users records a users batch and answers its counts, in request order;
// the membership changes run in the audiences worker.
func (m *Module) users(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	id := r.PathValue("custom_audience_id")
	if err := m.writable(r, acct.ID, id); err != nil {
		return err
	}
	req, err := adsx.ReadBatch(r, maxBatchBytes)
	if err != nil {
		return err
	}
	ops, err := parseBatch(req.Body, req.At)
	if err != nil {
		return err
	}
	b, err := m.deps.Store.RecordAudienceBatch(r.Context(), storage.NewAudienceBatch{
		AccountID: acct.ID, AudienceID: id, IdempotencyKey: req.Key, BodySHA256: req.SHA256,
		RetryWindow: RetryWindow, Operations: ops})
	if err != nil {
		return audienceErr(err, id, "")
	}
	m.deps.Kit.EnqueueBatch(r.Context(), storage.AudienceBatches, b.State, func() (*asynq.Task, error) { return tasks.AudienceBatch.New(b.ID) })
	return adsx.WriteData(w, p, http.StatusOK, b.Counts)
}

// writable answers first for an audience the account may not add users
// to (unseen: 404, READ_ONLY: 403), whatever the body; recording checks
// again under the row lock.
func (m *Module) writable(r *http.Request, accountID, id string) error {
	v, err := m.deps.Store.CustomAudience(r.Context(), accountID, id, false)
	if err == nil && !v.IsOwner && v.PermissionLevel == storage.PermissionReadOnly {
		err = storage.ErrAudienceReadOnly
	}
	if err != nil {
		return audienceErr(err, id, "")
	}
	return nil
}

// audienceErr maps a store error about audience id to the API's answer.
func audienceErr(err error, id, name string) error {
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return adsx.NotFound(codeAudienceNotFound, "custom_audience_id", id)
	case errors.Is(err, storage.ErrAudienceReadOnly):
		return adsx.NotAllowed(fmt.Sprintf("The account may only read the custom audience %s", id))
	case errors.Is(err, storage.ErrAudienceNotOwner):
		return adsx.NotAllowed(fmt.Sprintf("Only the account that owns the custom audience %s may change it", id))
	case errors.Is(err, storage.ErrRequestKeyReused):
		return adsx.KeyReused()
	case errors.Is(err, storage.ErrConflict):
		return adsx.Invalid("name", fmt.Sprintf("A custom audience named %q already exists in the account", name), name)
	}
	return fmt.Errorf("custom audience %s: %w", id, err)
}
