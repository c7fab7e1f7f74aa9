package postgres

import (
	"fmt"

	"github.com/aviary-dev/aviary/storage"
)

// sortColumn is what an ads list orders by for one sortable field: a
// non-null column (or expression) of the listing's FROM, qualified as the
// listing's query names its table, and the SQL type the cursor's text value
// is cast back to.
type sortColumn struct {
	Expr string
	Type string
}

// SQL types of the sort columns.
const (
	sortText   = "text"
	sortTime   = "timestamptz"
	sortBigint = "bigint"
)

// sortColumns maps each listing's sortable fields (the attribute names the
// API features offer in sort_by, and their default orders) to columns.
// A field a feature offers and this table lacks fails TestListSpecsMapToColumns
// (package api); add the field here first (docs/ads-conventions.md).
var sortColumns = map[storage.Listing]map[string]sortColumn{
	storage.ListingAdAccounts: {
		"name":       {"ad_accounts.name", sortText},
		"created_at": {"ad_accounts.created_at", sortTime},
		"updated_at": {"ad_accounts.updated_at", sortTime},
	},
	storage.ListingFundingInstruments: {
		"name":          {"funding_instruments.name", sortText},
		"type":          {"funding_instruments.type", sortText},
		"currency":      {"funding_instruments.currency", sortText},
		"entity_status": {"funding_instruments.entity_status", sortText},
		"start_time":    {"funding_instruments.start_time", sortTime},
		"created_at":    {"funding_instruments.created_at", sortTime},
		"updated_at":    {"funding_instruments.updated_at", sortTime},
	},
	storage.ListingAccountApps: {
		"app_store_identifier": {"account_apps.app_store_identifier", sortText},
		"os_type":              {"account_apps.os_type", sortText},
		"created_at":           {"account_apps.created_at", sortTime},
		"updated_at":           {"account_apps.updated_at", sortTime},
	},
	storage.ListingAccountHistory: {
		"change_time": {"account_history.change_time", sortTime},
	},
	storage.ListingCampaigns: {
		"name":                  {"c.name", sortText},
		"entity_status":         {"c.entity_status", sortText},
		"budget_optimization":   {"c.budget_optimization", sortText},
		"funding_instrument_id": {"c.funding_instrument_id", sortText},
		"currency":              {"c.currency", sortText},
		"created_at":            {"c.created_at", sortTime},
		"updated_at":            {"c.updated_at", sortTime},
	},
	// Names are optional and keyset pagination needs a non-null value, so
	// an unnamed line item sorts as "". The index line_items_account_name
	// (migration 0005) serves it.
	storage.ListingLineItems: {
		"name":          {"coalesce(li.name, '')", sortText},
		"created_at":    {"li.created_at", sortTime},
		"updated_at":    {"li.updated_at", sortTime},
		"entity_status": {"li.entity_status", sortText},
		"objective":     {"li.objective", sortText},
		"product_type":  {"li.product_type", sortText},
		"bid_strategy":  {"li.bid_strategy", sortText},
	},
	storage.ListingPromotedTweets: {
		"line_item_id":    {"pt.line_item_id", sortText},
		"tweet_id":        {"pt.tweet_id", sortBigint},
		"entity_status":   {"pt.entity_status", sortText},
		"approval_status": {"pt.approval_status", sortText},
		"created_at":      {"pt.created_at", sortTime},
		"updated_at":      {"pt.updated_at", sortTime},
	},
	storage.ListingAdsPosts: {
		"tweet_id": {"p.id", sortBigint},
	},
	storage.ListingTargetingCriteria: {
		"line_item_id":    {"tc.line_item_id", sortText},
		"targeting_type":  {"tc.targeting_type", sortText},
		"targeting_value": {"tc.targeting_value", sortText},
		"operator_type":   {"tc.operator_type", sortText},
		"created_at":      {"tc.created_at", sortTime},
		"updated_at":      {"tc.updated_at", sortTime},
	},
	storage.ListingCuratedCategories: {
		"created_at": {"c.created_at", sortTime},
	},
	storage.ListingLineItemCuratedCategories: {
		"created_at":          {"l.created_at", sortTime},
		"updated_at":          {"l.updated_at", sortTime},
		"line_item_id":        {"l.line_item_id", sortText},
		"curated_category_id": {"l.curated_category_id", sortText},
	},
	storage.ListingAccountMedia: {
		"created_at":    {"am.created_at", sortTime},
		"updated_at":    {"am.updated_at", sortTime},
		"creative_type": {"am.creative_type", sortText},
	},
	storage.ListingMediaCreatives: {
		"created_at":    {"mc.created_at", sortTime},
		"updated_at":    {"mc.updated_at", sortTime},
		"entity_status": {"mc.entity_status", sortText},
	},
	storage.ListingMediaLibrary: {
		"created_at": {"l.created_at", sortTime},
	},
	storage.ListingCustomAudiences: {
		"name":          {"a.name", sortText},
		"audience_size": {"a.audience_size", sortBigint},
		"created_at":    {"a.created_at", sortTime},
		"updated_at":    {"a.updated_at", sortTime},
	},
	storage.ListingAudiencePermissions: {
		"granted_account_id": {"p.granted_account_id", sortText},
		"permission_level":   {"p.permission_level", sortText},
		"created_at":         {"p.created_at", sortTime},
		"updated_at":         {"p.updated_at", sortTime},
	},
	storage.ListingTargetedCampaigns: {
		"created_at": {"c.created_at", sortTime},
	},
	storage.ListingDoNotReachLists: {
		"created_at": {"l.created_at", sortTime},
		"updated_at": {"l.updated_at", sortTime},
		"list_size":  {"l.list_size", sortBigint},
	},
	// Products list in first submission order, so the first variant of a
	// group comes first.
	// Cards of every kind (ads_cards, migration 0036).
	storage.ListingCards: {
		"name":       {"ads_cards.name", sortText},
		"card_type":  {"ads_cards.card_type", sortText},
		"created_at": {"ads_cards.created_at", sortTime},
		"updated_at": {"ads_cards.updated_at", sortTime},
	},
	storage.ListingProducts: {
		"submission_order": {"p.seq", sortBigint},
	},
}

// SortColumn returns the column expression listing l orders by for field,
// and whether l offers field at all.
func SortColumn(l storage.Listing, field string) (string, bool) {
	c, ok := sortColumns[l][field]
	return c.Expr, ok
}

// sortColumnOf is the column of s in listing l, or an error naming both
// when l does not sort by s.Field.
func sortColumnOf(l storage.Listing, s storage.Sort) (sortColumn, error) {
	c, ok := sortColumns[l][s.Field]
	if !ok {
		return sortColumn{}, fmt.Errorf("listing %q has no sortable field %q", l, s.Field)
	}
	return c, nil
}
