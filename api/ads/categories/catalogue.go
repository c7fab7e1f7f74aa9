package categories

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/storage"
)

// categoryList is how the curated categories page: by creation; they
// take no sort_by.
var categoryList = adsx.ListSpec{Listing: storage.ListingCuratedCategories, Default: storage.Sort{Field: "created_at"}}

// Lists are the module's list specs (checked against the store's columns
// by TestListSpecsMapToColumns in package api).
func (*Module) Lists() []adsx.ListSpec { return []adsx.ListSpec{categoryList, linkList} }

// businessCategoryJSON is an advertiser business category as the API
// renders it.
type businessCategoryJSON struct {
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	IABCategories []string `json:"iab_categories"`
}

func renderBusinessCategory(c storage.AdvertiserBusinessCategory) businessCategoryJSON {
	return businessCategoryJSON{ID: c.ID, Name: c.Name, IABCategories: nonNil(c.IABCategories)}
}

// businessCategories serves GET /12/advertiser_business_categories: the
// whole catalogue in one page (it takes no parameters).
func (m *Module) businessCategories(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	cats, err := m.deps.Store.AdvertiserBusinessCategories(r.Context())
	if err != nil {
		return fmt.Errorf("list advertiser business categories: %w", err)
	}
	return adsx.WriteList(w, m.deps.Kit, p, storage.Page[storage.AdvertiserBusinessCategory]{Items: cats}, renderBusinessCategory)
}

// curatedCategoryJSON is a curated category as the API renders it.
type curatedCategoryJSON struct {
	ID                              string   `json:"id"`
	Name                            string   `json:"name"`
	Description                     string   `json:"description"`
	CountryCodes                    []string `json:"country_codes"`
	PublisherUserIDs                []string `json:"publisher_user_ids"`
	VideosMonetizedInLastThirtyDays int      `json:"videos_monetized_in_last_thirty_days"`
	CreatedAt                       string   `json:"created_at"`
	UpdatedAt                       string   `json:"updated_at"`
}

func renderCuratedCategory(c storage.CuratedCategory) curatedCategoryJSON {
	return curatedCategoryJSON{ID: c.ID, Name: c.Name, Description: c.Description,
		CountryCodes: nonNil(c.CountryCodes), PublisherUserIDs: nonNil(c.PublisherUserIDs),
		VideosMonetizedInLastThirtyDays: c.VideosMonetizedInLastThirtyDays,
		CreatedAt:                       adsx.Time(c.CreatedAt), UpdatedAt: adsx.Time(c.UpdatedAt)}
}

// curatedCategories serves GET /12/accounts/:account_id/curated_categories:
// the curated categories available in any of the required country_codes.
func (m *Module) curatedCategories(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	if _, err := m.deps.Kit.Account(r); err != nil {
		return err
	}
	codes := countryCodes(p)
	opts := m.deps.Kit.List(p, categoryList)
	if err := p.Err(); err != nil {
		return err
	}
	page, err := m.deps.Store.CuratedCategories(r.Context(), codes, opts)
	if err != nil {
		return fmt.Errorf("list curated categories of %v: %w", codes, err)
	}
	return adsx.WriteList(w, m.deps.Kit, p, page, renderCuratedCategory)
}

// curatedCategory serves GET
// /12/accounts/:account_id/curated_categories/:curated_category_id.
func (m *Module) curatedCategory(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	if _, err := m.deps.Kit.Account(r); err != nil {
		return err
	}
	id := r.PathValue("curated_category_id")
	c, err := m.deps.Store.CuratedCategory(r.Context(), id)
	if errors.Is(err, storage.ErrNotFound) {
		return adsx.NotFound(adsx.CodeNotFound, "curated_category_id", id)
	}
	if err != nil {
		return fmt.Errorf("load curated category %s: %w", id, err)
	}
	return adsx.WriteData(w, p, http.StatusOK, renderCuratedCategory(c))
}

// countryCodes parses the required country_codes: a comma list of at most
// 200 ISO 3166-1 alpha-2 codes, any case, returned (and echoed) in upper
// case without repeats.
func countryCodes(p *adsx.Params) []string {
	if !p.Has("country_codes") {
		p.FailMissing("country_codes", "country_codes is missing")
		return nil
	}
	items := p.List("country_codes", adsx.MaxIDs)
	codes := make([]string, 0, len(items))
	for _, it := range items {
		c, ok := countryCode(it)
		if !ok {
			delete(p.Echo(), "country_codes")
			p.Fail("country_codes", fmt.Sprintf("Expected ISO 3166-1 alpha-2 country codes, got %q for country_codes", it))
			return nil
		}
		if !slices.Contains(codes, c) {
			codes = append(codes, c)
		}
	}
	if items != nil {
		p.Echo()["country_codes"] = codes
	}
	return codes
}

// placementsJSON is one entry of GET line_items/placements.
type placementsJSON struct {
	ProductType string     `json:"product_type"`
	Placements  [][]string `json:"placements"`
}

// placements serves GET /12/line_items/placements: the valid placement
// combinations of each product type, or of the one product_type asked.
func (m *Module) placements(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	only := p.Enum("product_type", storage.PlacementProductTypes)
	if err := p.Err(); err != nil {
		return err
	}
	types := storage.PlacementProductTypes
	if only != nil {
		types = []string{*only}
	}
	out := make([]placementsJSON, 0, len(types))
	for _, t := range types {
		out = append(out, placementsJSON{ProductType: t, Placements: storage.PlacementCombinations(t)})
	}
	return adsx.WriteData(w, p, http.StatusOK, out)
}

// nonNil renders a nil list as [] rather than null.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
