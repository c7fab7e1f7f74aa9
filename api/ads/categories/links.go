package categories

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/storage"
)

// Paths of the line item curated categories.
const (
	linksPath = "/12/accounts/{account_id}/line_item_curated_categories"
	linkPath  = linksPath + "/{line_item_curated_category_id}"
	linkParam = "line_item_curated_category_id"
)

// linkList is how the list pages: sort_by takes the non-null attributes.
var linkList = adsx.ListSpec{
	Listing:  storage.ListingLineItemCuratedCategories,
	Sortable: adsx.Sortable{"created_at", "updated_at", "line_item_id", "curated_category_id"},
	Default:  storage.Sort{Field: "created_at"},
}

// linkJSON is a line item curated category as the API renders it.
type linkJSON struct {
	ID                string `json:"id"`
	LineItemID        string `json:"line_item_id"`
	CuratedCategoryID string `json:"curated_category_id"`
	CreatedAt         string `json:"created_at"`
	UpdatedAt         string `json:"updated_at"`
	Deleted           bool   `json:"deleted"`
}

func renderLink(c storage.LineItemCuratedCategory) linkJSON {
	return linkJSON{ID: c.ID, LineItemID: c.LineItemID, CuratedCategoryID: c.CuratedCategoryID,
		CreatedAt: adsx.Time(c.CreatedAt), UpdatedAt: adsx.Time(c.UpdatedAt), Deleted: c.Deleted}
}

// createLink serves POST .../line_item_curated_categories.
func (m *Module) createLink(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	lineItemID := p.Required("line_item_id", 64)
	categoryID := p.Required("curated_category_id", 64)
	if err := p.Err(); err != nil {
		return err
	}
	c, err := m.deps.Store.CreateLineItemCuratedCategory(r.Context(), acct.ID, lineItemID, categoryID)
	if err != nil {
		return storeError("", lineItemID, err)
	}
	return adsx.WriteData(w, p, http.StatusOK, renderLink(c))
}

// updateLink serves PUT .../line_item_curated_categories/:id.
func (m *Module) updateLink(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	u := storage.LineItemCuratedCategoryUpdate{
		LineItemID:        p.String("line_item_id", 64),
		CuratedCategoryID: p.String("curated_category_id", 64),
	}
	if err := p.Err(); err != nil {
		return err
	}
	id := r.PathValue(linkParam)
	c, err := m.deps.Store.UpdateLineItemCuratedCategory(r.Context(), acct.ID, id, u)
	if err != nil {
		lineItemID := ""
		if u.LineItemID != nil {
			lineItemID = *u.LineItemID
		}
		return storeError(id, lineItemID, err)
	}
	return adsx.WriteData(w, p, http.StatusOK, renderLink(c))
}

// storeError turns the store's answer about the link id (a new one: "")
// into the API's: a missing line item is LINE_ITEM_NOT_FOUND and a missing
// curated category NOT_FOUND, each naming its parameter; a line item that
// already targets a curated category is an invalid line_item_id; a missing
// link is NOT_FOUND naming the path's id.
func storeError(id, lineItemID string, err error) error {
	var missing *storage.MissingRefError
	switch {
	case errors.As(err, &missing) && missing.Param == "line_item_id":
		return adsx.NotFound("LINE_ITEM_NOT_FOUND", missing.Param, missing.ID)
	case errors.As(err, &missing):
		return adsx.NotFound(adsx.CodeNotFound, missing.Param, missing.ID)
	case errors.Is(err, storage.ErrConflict):
		return adsx.Invalid("line_item_id",
			fmt.Sprintf("Line item %s already targets a curated category; a line item may target only one at a time", lineItemID), lineItemID)
	case errors.Is(err, storage.ErrNotFound) && id != "":
		return adsx.NotFound(adsx.CodeNotFound, linkParam, id)
	}
	return fmt.Errorf("line item curated category %q: %w", id, err)
}
