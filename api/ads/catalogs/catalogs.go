package catalogs

import (
	"errors"
	"fmt"
	"math"
	"net/http"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/storage"
)

// Ads error codes of this module (docs/ads-errors.md).
const (
	codeCatalogExists = "CATALOG_ALREADY_EXISTS"
)

// maxName bounds a catalog name.
const maxName = 255

// feature refuses a caller none of whose ads accounts (on this listener)
// has the CATALOGS feature: catalogs are early access.
func (m *Module) feature(r *http.Request) error {
	uid := adsx.UserID(r)
	ok, err := m.deps.Store.UserHasAdFeature(r.Context(), uid, storage.FeatureCatalogs, adsx.Sandbox(r.Context()))
	if err != nil {
		return fmt.Errorf("catalogs feature of user %d: %w", uid, err)
	}
	if !ok {
		e := adsx.FeatureNotAvailable(storage.FeatureCatalogs)
		e.Detail = "Product catalogs are early access: none of your ads accounts has the CATALOGS feature"
		return e
	}
	return nil
}

// userID reads the optional user_id: only the caller's own id names a
// user whose catalogs the caller sees; ok is false for another user.
func userID(r *http.Request, p *adsx.Params) bool {
	id := p.Int64("user_id", 1, math.MaxInt64)
	return id == nil || *id == adsx.UserID(r)
}

func (m *Module) listCatalogs(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	own := userID(r, p)
	if err := p.Err(); err != nil {
		return err
	}
	if err := m.feature(r); err != nil {
		return err
	}
	var page storage.Page[storage.ProductCatalog]
	if own {
		cats, err := m.deps.Store.ProductCatalogsOf(r.Context(), adsx.UserID(r), adsx.Sandbox(r.Context()))
		if err != nil {
			return fmt.Errorf("list product catalogs: %w", err)
		}
		page.Items = cats
	}
	return adsx.WriteList(w, m.deps.Kit, p, page, renderCatalog)
}

func (m *Module) createCatalog(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	name := p.Required("name", maxName)
	if !userID(r, p) {
		p.Fail("user_id", "user_id must be the authenticated user")
	}
	if err := p.Err(); err != nil {
		return err
	}
	if err := m.feature(r); err != nil {
		return err
	}
	uid := adsx.UserID(r)
	c, err := m.deps.Store.CreateProductCatalog(r.Context(), uid, adsx.Sandbox(r.Context()), name)
	if errors.Is(err, storage.ErrConflict) {
		return catalogExists(r, m, uid)
	}
	if err != nil {
		return fmt.Errorf("create product catalog: %w", err)
	}
	return adsx.WriteData(w, p, http.StatusOK, renderCatalog(c))
}

// catalogExists is the answer to a second catalog on the same side: 400
// CATALOG_ALREADY_EXISTS naming the catalog the user has there.
func catalogExists(r *http.Request, m *Module, uid int64) error {
	existing := ""
	if cats, err := m.deps.Store.ProductCatalogsOf(r.Context(), uid, adsx.Sandbox(r.Context())); err == nil && len(cats) > 0 {
		existing = " (" + cats[0].ID + ")"
	}
	e := adsx.Invalid("name", fmt.Sprintf("You already have a product catalog%s: one catalog per user holds all products", existing))
	e.AdsCode = codeCatalogExists
	e.Params[0].Code = codeCatalogExists
	return e
}

func (m *Module) renameCatalog(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	c, err := m.catalog(r) // first, as the account check is everywhere else
	if err != nil {
		return err
	}
	name := p.Required("name", maxName)
	if err := p.Err(); err != nil {
		return err
	}
	id := c.ID
	c, err = m.deps.Store.RenameProductCatalog(r.Context(), adsx.UserID(r), adsx.Sandbox(r.Context()), id, name)
	if err != nil {
		return catalogErr(err, id)
	}
	return adsx.WriteData(w, p, http.StatusOK, renderCatalog(c))
}

func (m *Module) deleteCatalog(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	c, err := m.catalog(r)
	if err != nil {
		return err
	}
	id := c.ID
	c, err = m.deps.Store.DeleteProductCatalog(r.Context(), adsx.UserID(r), adsx.Sandbox(r.Context()), id)
	if err != nil {
		return catalogErr(err, id)
	}
	return adsx.WriteData(w, p, http.StatusOK, renderCatalog(c))
}

// catalogErr maps a store error about catalog id: missing or another
// user's is 404 NOT_FOUND naming product_catalog_id.
func catalogErr(err error, id string) error {
	var apiErr *apierr.Error
	switch {
	case errors.As(err, &apiErr):
		return apiErr
	case errors.Is(err, storage.ErrNotFound):
		return adsx.NotFound(adsx.CodeNotFound, "product_catalog_id", id)
	}
	return fmt.Errorf("product catalog %s: %w", id, err)
}
