package donotreach

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/storage"
)

// maxDescription bounds description (the platform's description limit).
const maxDescription = 200

// listSpec is how lists sort: by their non-null attributes.
var listSpec = adsx.ListSpec{
	Listing:  storage.ListingDoNotReachLists,
	Sortable: adsx.Sortable{"created_at", "updated_at", "list_size"},
	Default:  storage.Sort{Field: "created_at"},
}

// Lists are the module's list specs (checked against the store's columns
// by TestListSpecsMapToColumns in package api).
func (*Module) Lists() []adsx.ListSpec { return []adsx.ListSpec{listSpec} }

// accountOf is the list filter: the path account.
func accountOf(_ *adsx.Params, acct storage.AdAccount) string { return acct.ID }

// create is POST do_not_reach_lists: an account has at most one list
// that is not deleted (a second is 403 ACTION_NOT_ALLOWED).
func (m *Module) create(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	description := p.String("description", maxDescription)
	if err := p.Err(); err != nil {
		return err
	}
	l, err := m.deps.Store.CreateDoNotReachList(r.Context(), acct.ID, description)
	if errors.Is(err, storage.ErrConflict) {
		return adsx.NotAllowed("An account can only have at most one Do Not Reach List; delete it to create another")
	}
	if err != nil {
		return fmt.Errorf("create do-not-reach list of %s: %w", acct.ID, err)
	}
	return adsx.WriteData(w, p, http.StatusOK, render(l))
}
