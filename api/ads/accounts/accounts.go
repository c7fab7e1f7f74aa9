package accounts

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/storage"
)

// Bounds and defaults of the account endpoints.
const (
	maxQuery        = 255
	maxAccountName  = 255
	sandboxName     = "Sandbox account"
	sandboxNotAllow = "Accounts can be created and deleted only in the sandbox"
)

// accountList is how GET /12/accounts pages.
var accountList = adsx.ListSpec{
	Listing:  storage.ListingAdAccounts,
	Sortable: adsx.Sortable{"name", "created_at", "updated_at"},
	Default:  storage.Sort{Field: "created_at"},
}

// Lists are the module's list specs (checked against the store's columns
// by TestListSpecsMapToColumns in package api).
func (*Module) Lists() []adsx.ListSpec {
	return []adsx.ListSpec{accountList, appList, fundingList, historyList}
}

// sandboxFunding is the funding instrument a sandbox account is created with.
var sandboxFunding = storage.NewFundingInstrument{Name: "Sandbox credit card", Description: "Sandbox credit card (no charges are made)",
	Type: "CREDIT_CARD", Currency: "USD"}

// listAccounts serves GET /12/accounts: the accounts the caller may use on
// this listener.
func (m *Module) listAccounts(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	f := storage.AdAccountFilter{UserID: adsx.UserID(r), Sandbox: adsx.Sandbox(r.Context()), IDs: p.IDs("account_ids")}
	if q := p.String("q", maxQuery); q != nil {
		f.NamePrefix = *q
	}
	opts := m.deps.Kit.List(p, accountList)
	if err := p.Err(); err != nil {
		return err
	}
	page, err := m.deps.Store.ListAdAccounts(r.Context(), f, opts)
	if err != nil {
		return fmt.Errorf("list ad accounts: %w", err)
	}
	return adsx.WriteList(w, m.deps.Kit, p, page, renderAccount)
}

// getAccount serves GET /12/accounts/:account_id.
func (m *Module) getAccount(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	a, err := m.deps.Kit.AccountWithDeleted(r)
	if err != nil {
		return err
	}
	withDeleted := p.Flag("with_deleted", false)
	if err := p.Err(); err != nil {
		return err
	}
	if a.Deleted && !withDeleted {
		return adsx.AccountNotFound(a.ID)
	}
	return adsx.WriteData(w, p, http.StatusOK, renderAccount(a))
}

// updateAccount serves PUT /12/accounts/:account_id.
func (m *Module) updateAccount(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	a, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	u := accountUpdate(p)
	if err := p.Err(); err != nil {
		return err
	}
	a, err = m.deps.Store.UpdateAdAccount(r.Context(), a.ID, u)
	if errors.Is(err, storage.ErrNotFound) {
		return adsx.AccountNotFound(r.PathValue("account_id"))
	}
	if err != nil {
		return fmt.Errorf("update ad account: %w", err)
	}
	return adsx.WriteData(w, p, http.StatusOK, renderAccount(a))
}

// accountUpdate parses PUT's parameters: name and/or industry_type.
func accountUpdate(p *adsx.Params) storage.AdAccountUpdate {
	u := storage.AdAccountUpdate{Name: p.String("name", maxAccountName), IndustryType: p.Enum("industry_type", storage.AdIndustryTypes)}
	if u.Name != nil && strings.TrimSpace(*u.Name) == "" {
		p.Fail("name", "name must not be blank")
	}
	if !p.Has("name") && !p.Has("industry_type") {
		p.FailMissing("name", "At least one of name and industry_type is required")
	}
	return u
}

// createAccount serves POST /12/accounts (sandbox only): a new account of
// the caller with one active funding instrument, returned in a list.
func (m *Module) createAccount(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	if !adsx.Sandbox(r.Context()) {
		return adsx.NotAllowed(sandboxNotAllow)
	}
	a, _, err := m.deps.Store.CreateAdAccountWithFunding(r.Context(), adsx.UserID(r), sandboxName, true, sandboxFunding)
	if err != nil {
		return fmt.Errorf("create sandbox ad account: %w", err)
	}
	return adsx.WriteList(w, m.deps.Kit, p, storage.Page[storage.AdAccount]{Items: []storage.AdAccount{a}}, renderAccount)
}

// deleteAccount serves DELETE /12/accounts/:account_id (sandbox only).
func (m *Module) deleteAccount(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	if !adsx.Sandbox(r.Context()) {
		return adsx.NotAllowed(sandboxNotAllow)
	}
	a, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	a, err = m.deps.Store.DeleteAdAccount(r.Context(), a.ID)
	if errors.Is(err, storage.ErrNotFound) {
		return adsx.AccountNotFound(r.PathValue("account_id"))
	}
	if err != nil {
		return fmt.Errorf("delete ad account: %w", err)
	}
	return adsx.WriteData(w, p, http.StatusOK, renderAccount(a))
}
