package permissions

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/storage"
)

// Ads error codes of this module (the platform's error table).
const (
	// codeAudienceNotFound answers an audience that is missing, deleted, or
	// not the path account's to manage (or, for targeted, to use).
	codeAudienceNotFound = "TAILORED_AUDIENCE_NOT_FOUND"
)

var (
	listParams   = []string{"granted_account_ids", "tailored_audience_permission_ids", "count", "cursor", "sort_by", "with_total_count"}
	createParams = []string{"granted_account_id", "permission_level"}
)

// listSpec sorts grants by their attributes (default: oldest first).
var listSpec = adsx.ListSpec{
	Listing:  storage.ListingAudiencePermissions,
	Sortable: adsx.Sortable{"granted_account_id", "permission_level", "created_at", "updated_at"},
	Default:  storage.Sort{Field: "created_at"},
}

// Lists are the module's list specs (checked against the store's columns
// by TestListSpecsMapToColumns in package api).
func (*Module) Lists() []adsx.ListSpec { return []adsx.ListSpec{listSpec, targetedSpec} }

// permissionJSON is the tailored audience permission object of the
// reference.
type permissionJSON struct {
	TailoredAudienceID string `json:"tailored_audience_id"`
	PermissionLevel    string `json:"permission_level"`
	ID                 string `json:"id"`
	CreatedAt          string `json:"created_at"`
	GrantedAccountID   string `json:"granted_account_id"`
	UpdatedAt          string `json:"updated_at"`
	Deleted            bool   `json:"deleted"`
}

func render(p storage.AudiencePermission) permissionJSON {
	return permissionJSON{TailoredAudienceID: p.AudienceID, PermissionLevel: p.PermissionLevel, ID: p.ID,
		CreatedAt: adsx.Time(p.CreatedAt), GrantedAccountID: p.GrantedAccountID, UpdatedAt: adsx.Time(p.UpdatedAt), Deleted: p.Deleted}
}

// audienceNotFound is the one answer for an audience that is missing,
// deleted, or another account's, so audience ids cannot be probed.
func audienceNotFound(param, id string) error {
	return adsx.NotFound(codeAudienceNotFound, param, id)
}

// list serves GET permissions: the live grants of an audience the path
// account owns.
func (m *Module) list(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	k := m.deps.Kit
	acct, err := k.Account(r)
	if err != nil {
		return err
	}
	f := storage.AudiencePermissionFilter{OwnerAccountID: acct.ID, AudienceID: r.PathValue("tailored_audience_id"),
		GrantedAccountIDs: p.IDs("granted_account_ids"), PermissionIDs: p.IDs("tailored_audience_permission_ids")}
	opts := k.List(p, listSpec)
	if err := p.Err(); err != nil {
		return err
	}
	page, err := m.deps.Store.ListAudiencePermissions(r.Context(), f, opts)
	switch {
	case errors.Is(err, storage.ErrAudienceNotFound):
		return audienceNotFound("tailored_audience_id", f.AudienceID)
	case err != nil:
		return fmt.Errorf("list permissions of audience %s: %w", f.AudienceID, err)
	}
	return adsx.WriteList(w, k, p, page, render)
}

// create serves POST permissions: the path account shares an audience it
// owns with granted_account_id.
func (m *Module) create(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	n := storage.NewAudiencePermission{OwnerAccountID: acct.ID, AudienceID: r.PathValue("tailored_audience_id")}
	if id := p.ID("granted_account_id"); id != nil {
		n.GrantedAccountID = *id
	} else if !p.Failed("granted_account_id") {
		p.FailMissing("granted_account_id", "granted_account_id is missing")
	}
	n.PermissionLevel = p.RequiredEnum("permission_level", storage.AudiencePermissionLevels)
	if err := p.Err(); err != nil {
		return err
	}
	perm, err := m.deps.Store.CreateAudiencePermission(r.Context(), n)
	if err != nil {
		return createErr(n, err)
	}
	return adsx.WriteData(w, p, http.StatusOK, render(perm))
}

// createErr turns a refused grant into the API's answer, naming the
// parameter at fault.
func createErr(n storage.NewAudiencePermission, err error) error {
	const param = "granted_account_id"
	switch {
	case errors.Is(err, storage.ErrAudienceNotFound):
		return audienceNotFound("tailored_audience_id", n.AudienceID)
	case errors.Is(err, storage.ErrGrantToOwner):
		return adsx.Invalid(param, "The account owns the audience; it cannot be granted its own audience", n.GrantedAccountID)
	case errors.Is(err, storage.ErrGrantedAccountNotFound):
		return adsx.NotFound(adsx.CodeNotFound, param, n.GrantedAccountID)
	case errors.Is(err, storage.ErrGrantExists):
		return adsx.Invalid(param, fmt.Sprintf("Account %s already has a permission on audience %s; revoke it first to change its level",
			n.GrantedAccountID, n.AudienceID), n.GrantedAccountID)
	case errors.Is(err, storage.ErrGrantOutsideBusiness):
		msg := fmt.Sprintf("Account %s is in another business; sharing outside the business needs the %s account feature",
			n.GrantedAccountID, storage.FeatureShareAudienceOutsideBusiness)
		e := adsx.NotAllowed(msg)
		e.Params = []apierr.ParamError{apierr.Param(param, msg, n.GrantedAccountID)}
		return e
	}
	return fmt.Errorf("grant audience %s: %w", n.AudienceID, err)
}

// delete serves DELETE permissions/{id}: the owner revokes a live grant;
// the answer is the grant with deleted true.
func (m *Module) delete(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	audience, id := r.PathValue("tailored_audience_id"), r.PathValue("tailored_audience_permission_id")
	perm, err := m.deps.Store.DeleteAudiencePermission(r.Context(), acct.ID, audience, id)
	switch {
	case errors.Is(err, storage.ErrAudienceNotFound):
		return audienceNotFound("tailored_audience_id", audience)
	case errors.Is(err, storage.ErrNotFound):
		return adsx.NotFound(adsx.CodeNotFound, "tailored_audience_permission_id", id)
	case err != nil:
		return fmt.Errorf("revoke permission %s: %w", id, err)
	}
	return adsx.WriteData(w, p, http.StatusOK, render(perm))
}
