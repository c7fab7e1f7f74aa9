package storage

import (
	"encoding/json"
	"time"
)

// AdAccount is an advertising account. Its owner and the users granted
// access (AdAccountUsers) may use it; Sandbox accounts live only on the
// sandbox listener.
type AdAccount struct {
	ID               string
	Name             string
	UserID           int64
	BusinessID       string
	BusinessName     string
	Timezone         string
	TimezoneSwitchAt *time.Time
	ApprovalStatus   string
	IndustryType     string
	Sandbox          bool
	CreatedAt        time.Time
	UpdatedAt        time.Time
	Deleted          bool
}

// AdIndustryTypes are the values of an account's industry_type.
var AdIndustryTypes = []string{"AGENCY", "BUSINESS_TO_BUSINESS", "ONLINE_SERVICES", "EDUCATION", "FINANCIAL",
	"HEALTH", "GOVERNMENT", "MEDIA", "MOBILE", "RESTAURANT", "RETAIL", "TECHNOLOGY", "TRAVEL", "OTHER"}

// Listing names one ads list of the store (the campaigns of an account,
// the line items, ...). A feature's list names its listing and the fields
// it sorts by; the store maps each (listing, field) to its column.
type Listing string

// The ads listings.
const (
	ListingAdAccounts                Listing = "ad_accounts"
	ListingFundingInstruments        Listing = "funding_instruments"
	ListingAccountApps               Listing = "account_apps"
	ListingAccountHistory            Listing = "account_history"
	ListingCampaigns                 Listing = "campaigns"
	ListingLineItems                 Listing = "line_items"
	ListingPromotedTweets            Listing = "promoted_tweets"
	ListingTargetingCriteria         Listing = "targeting_criteria"
	ListingCuratedCategories         Listing = "curated_categories"
	ListingLineItemCuratedCategories Listing = "line_item_curated_categories"
	ListingAccountMedia              Listing = "account_media"
	ListingMediaCreatives            Listing = "media_creatives"
	ListingMediaLibrary              Listing = "media_library"
	ListingCustomAudiences           Listing = "custom_audiences"
	ListingAudiencePermissions       Listing = "custom_audience_permissions"
	ListingTargetedCampaigns         Listing = "targeted_campaigns"
	ListingDoNotReachLists           Listing = "do_not_reach_lists"
	ListingProducts                  Listing = "products"
)

// Sort is an ads list's order: a sortable field of the listing (the
// attribute name the API offers, e.g. "created_at") and its direction.
// The store maps the field to a non-null column; rows tie-break on the
// listing's id, in the same direction.
type Sort struct {
	Field string
	Desc  bool
}

// Position is where a page ended: the sort value of its last row (as
// text) and that row's id. The next page starts strictly after it.
type Position struct {
	Value string `json:"v"`
	ID    string `json:"i"`
}

// ListOptions are the ads list parameters every store list takes.
type ListOptions struct {
	// Count is the page size (1..1000).
	Count int
	Sort  Sort
	// After is the end of the previous page; nil starts at the beginning.
	After *Position
	// WithDeleted includes soft-deleted rows.
	WithDeleted bool
	// WithTotal asks for the number of rows matching the filters.
	WithTotal bool
}

// Page is one page of an ads list.
type Page[T any] struct {
	Items []T
	// Next is the position to continue after; nil on the last page.
	Next *Position
	// Total is the number of matching rows when ListOptions.WithTotal.
	Total *int64
}

// Ads entity types of account history (entity_type).
const (
	EntityCampaign          = "CAMPAIGN"
	EntityLineItem          = "LINE_ITEM"
	EntityPromotedTweet     = "PROMOTED_TWEET"
	EntityTargetingCriteria = "TARGETING_CRITERIA"
	EntityPromotedAccount   = "PROMOTED_ACCOUNT"
)

// HistoryEntityTypes are the entity_type values account_history takes.
var HistoryEntityTypes = []string{EntityCampaign, EntityLineItem, EntityPromotedTweet, EntityTargetingCriteria, EntityPromotedAccount}

// Account history change types (change_type).
const (
	ChangeCreate = "CREATE"
	ChangeUpdate = "UPDATE"
	ChangeDelete = "DELETE"
)

// HistoryEntry is one recorded change of an ads entity. Changes maps each
// changed attribute to {"old": ..., "new": ...}; EntityData is the entity
// as it was after the change.
type HistoryEntry struct {
	ID             int64
	AccountID      string
	EntityType     string
	EntityID       string
	ChangeType     string
	ChangeByUserID *int64
	ChangePlatform string
	Changes        json.RawMessage
	EntityData     json.RawMessage
	ChangeTime     time.Time
}

// Audience permission levels.
const (
	PermissionReadOnly  = "READ_ONLY"
	PermissionReadWrite = "READ_WRITE"
)

// CustomAudience is an account's custom audience, or one shared with it
// (PermissionLevel says how; the owner has READ_WRITE).
type CustomAudience struct {
	ID             string
	OwnerAccountID string
	Name           string
	Description    *string
	AudienceType   string
	PartnerSource  string
	AudienceSize   int64
	// PermissionLevel is the viewing account's access.
	PermissionLevel string
	// InFlight is how many of its batches await their worker.
	InFlight  int
	CreatedAt time.Time
	UpdatedAt time.Time
	Deleted   bool
}
