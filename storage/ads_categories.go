package storage

import (
	"fmt"
	"slices"
	"time"
)

// AdvertiserBusinessCategory describes an advertiser's brand to publishers:
// a named set of IAB categories. A PREROLL_VIEWS line item carries one or
// two of them through its categories (set to their IAB categories).
type AdvertiserBusinessCategory struct {
	ID            string
	Name          string
	IABCategories []string
}

// CuratedCategory is a preset group of publishers a PREROLL_VIEWS line
// item may run next to, available in the countries of CountryCodes.
type CuratedCategory struct {
	ID                              string
	Name                            string
	Description                     string
	CountryCodes                    []string
	PublisherUserIDs                []string
	VideosMonetizedInLastThirtyDays int
	CreatedAt                       time.Time
	UpdatedAt                       time.Time
}

// LineItemCuratedCategory links a line item to the curated category it
// targets. A line item targets at most one curated category at a time.
type LineItemCuratedCategory struct {
	ID                string
	AccountID         string
	LineItemID        string
	CuratedCategoryID string
	CreatedAt         time.Time
	UpdatedAt         time.Time
	Deleted           bool
}

// LineItemCuratedCategoryUpdate is a change of a line item curated
// category; nil fields are left as they are.
type LineItemCuratedCategoryUpdate struct {
	LineItemID        *string
	CuratedCategoryID *string
}

// MissingRefError reports an entity named by a parameter (Param, for
// example line_item_id) that does not exist, is deleted or belongs to
// another account. It matches ErrNotFound.
type MissingRefError struct {
	Param string
	ID    string
}

func (e *MissingRefError) Error() string {
	return fmt.Sprintf("%s %s: %v", e.Param, e.ID, ErrNotFound)
}

// Unwrap makes errors.Is(err, ErrNotFound) hold.
func (e *MissingRefError) Unwrap() error { return ErrNotFound }

// PlacementProductTypes are the product_type values of line items, each
// with its placement combinations (PlacementCombinations).
var PlacementProductTypes = []string{"MEDIA", "PROMOTED_ACCOUNT", "PROMOTED_TWEETS"}

// Line item placements (the platform's names, with the service's name
// replaced by SERVICE).
const (
	PlacementAllOnService       = "ALL_ON_SERVICE"
	PlacementPublisherNetwork   = "PUBLISHER_NETWORK"
	PlacementServiceProfile     = "SERVICE_PROFILE"
	PlacementServiceSearch      = "SERVICE_SEARCH"
	PlacementServiceTimeline    = "SERVICE_TIMELINE"
	PlacementServiceReplies     = "SERVICE_REPLIES"
	PlacementTapBanner          = "TAP_BANNER"
	PlacementTapFull            = "TAP_FULL"
	PlacementTapFullLandscape   = "TAP_FULL_LANDSCAPE"
	PlacementTapNative          = "TAP_NATIVE"
	PlacementTapMediumRectangle = "TAP_MRECT"
)

// PlacementValues are every value a line item's placements may hold; which
// combinations a product type takes is PlacementCombinations.
var PlacementValues = []string{PlacementAllOnService, PlacementPublisherNetwork, PlacementServiceProfile,
	PlacementServiceSearch, PlacementServiceTimeline, PlacementServiceReplies, PlacementTapBanner,
	PlacementTapFull, PlacementTapFullLandscape, PlacementTapNative, PlacementTapMediumRectangle}

// placementCombinations is the table GET line_items/placements serves and
// line items are checked against. A profile placement never stands alone.
var placementCombinations = map[string][][]string{
	"MEDIA": {
		{PlacementAllOnService},
		{PlacementServiceTimeline},
		{PlacementPublisherNetwork},
		{PlacementAllOnService, PlacementPublisherNetwork},
	},
	"PROMOTED_ACCOUNT": {
		{PlacementAllOnService},
		{PlacementServiceTimeline},
	},
	"PROMOTED_TWEETS": {
		{PlacementAllOnService},
		{PlacementAllOnService, PlacementPublisherNetwork},
		{PlacementPublisherNetwork},
		{PlacementServiceProfile, PlacementServiceSearch},
		{PlacementServiceProfile, PlacementServiceSearch, PlacementServiceTimeline},
		{PlacementServiceProfile, PlacementServiceTimeline},
		{PlacementServiceSearch},
		{PlacementServiceSearch, PlacementServiceTimeline},
		{PlacementServiceTimeline},
	},
}

// PlacementCombinations are the valid placement sets of a product type
// (each sorted, in a fixed order); nil for an unknown product type. The
// result is a copy the caller may change.
func PlacementCombinations(productType string) [][]string {
	combos, ok := placementCombinations[productType]
	if !ok {
		return nil
	}
	out := make([][]string, len(combos))
	for i, c := range combos {
		out[i] = slices.Clone(c)
	}
	return out
}

// PlacementsAllowed reports whether placements, in any order and without
// repeats, are one of the valid combinations of productType.
func PlacementsAllowed(productType string, placements []string) bool {
	set := slices.Sorted(slices.Values(placements))
	if len(slices.Compact(slices.Clone(set))) != len(set) {
		return false
	}
	for _, c := range placementCombinations[productType] {
		if slices.Equal(slices.Sorted(slices.Values(c)), set) {
			return true
		}
	}
	return false
}
