package storage

import (
	"time"
)

// AdAccountFilter selects the accounts of GET /12/accounts: those UserID
// may use on one side (sandbox or production), optionally narrowed to IDs
// and to names starting with NamePrefix (case-insensitive).
type AdAccountFilter struct {
	UserID     int64
	Sandbox    bool
	IDs        []string
	NamePrefix string
}

// AdAccountUpdate is a change of an account; nil fields stay as they are.
type AdAccountUpdate struct {
	Name         *string
	IndustryType *string
}

// AccountApp is a mobile app associated with an ads account.
type AccountApp struct {
	ID                        string
	AccountID                 string
	AppStoreIdentifier        string
	ConversionTrackingEnabled bool
	DeepLinkPattern           *string
	OSType                    string
	CreatedAt                 time.Time
	UpdatedAt                 time.Time
	Deleted                   bool
}

// FundingInstrument pays for an account's campaigns.
type FundingInstrument struct {
	ID                        string
	AccountID                 string
	Name                      string
	Description               string
	Type                      string
	Currency                  string
	EntityStatus              string
	StartTime                 time.Time
	EndTime                   *time.Time
	CreditLimitLocalMicro     *int64
	FundedAmountLocalMicro    *int64
	CreditRemainingLocalMicro *int64
	IOHeader                  *string
	Cancelled                 bool
	CreatedAt                 time.Time
	UpdatedAt                 time.Time
	Deleted                   bool
}

// Reasons a funding instrument cannot fund campaigns.
const (
	FundingReasonDeleted   = "DELETED"
	FundingReasonCancelled = "CANCELLED"
	FundingReasonExpired   = "EXPIRED"
	FundingReasonInactive  = "INACTIVE"
)

// ReasonsNotAbleToFund lists why the instrument cannot fund campaigns at
// now; empty means it can.
func (f FundingInstrument) ReasonsNotAbleToFund(now time.Time) []string {
	reasons := []string{}
	if f.Deleted {
		reasons = append(reasons, FundingReasonDeleted)
	}
	if f.Cancelled {
		reasons = append(reasons, FundingReasonCancelled)
	}
	if f.EndTime != nil && !f.EndTime.After(now) {
		reasons = append(reasons, FundingReasonExpired)
	}
	if f.EntityStatus != FundingStatusActive {
		reasons = append(reasons, FundingReasonInactive)
	}
	return reasons
}

// FundingStatusActive is the entity_status of a usable funding instrument.
const FundingStatusActive = "ACTIVE"

// FundingInstrumentTypes are the values of a funding instrument's type.
var FundingInstrumentTypes = []string{"AGENCY_CREDIT_LINE", "CREDIT_CARD", "CREDIT_LINE", "INSERTION_ORDER", "PARTNER_MANAGED"}

// NewFundingInstrument is a funding instrument to create (active). Name and
// Description default from Type.
type NewFundingInstrument struct {
	Name                   string
	Description            string
	Type                   string
	Currency               string
	CreditLimitLocalMicro  *int64
	FundedAmountLocalMicro *int64
	// StartTime defaults to now; EndTime to none.
	StartTime, EndTime *time.Time
}

// Account features that gate capabilities of later ads features.
const (
	FeatureShareAudienceOutsideBusiness = "SHARE_AUDIENCE_OUTSIDE_BUSINESS"
	FeaturePromotedMediaPolls           = "PROMOTED_MEDIA_POLLS"
	FeatureCatalogs                     = "CATALOGS"
)

// AdFeatures are the feature keys an account can be granted (aviary admin
// ads feature) and GET features filters on.
var AdFeatures = []string{"AGE_TARGETING", "ALLOW_SKIPPABLE_VIDEOS_FOR_PREROLL_VIEWS_OBJECTIVE", "AWARENESS_OBJECTIVE",
	"BRAND_TPN", FeatureCatalogs, "CHARGE_FOR_GOOD_CLICK", "CITY_TARGETING", "CONVERSATION_CARD", "CONVERSATION_CARD_FOUR_OPTIONS",
	"CONVERSATION_CARD_UNLOCK", "CPI_CHARGING", "DIRECT_MESSAGE_CARD", "DR_TAP", "ENGAGER_RETARGETING", "EVENT_TARGETING",
	"INSTALLED_APP_CATEGORY_TARGETING", "MOBILE_CONVERSION_TRANSACTION_VALUE", "OPTIMIZED_ACTION_BIDDING",
	"PREROLL_VIEWS_OBJECTIVE", FeaturePromotedMediaPolls, "REACH_AND_FREQUENCY_ANALYTICS", "REACH_FREQUENCY_CAP",
	FeatureShareAudienceOutsideBusiness, "UNIVERSAL_LOOKALIKE", "VALIDATED_AGE_TARGETING", "VIDEO_APP_DOWNLOAD_CARD",
	"VIDEO_VIEWS_MIDROLL_OBJECTIVE", "WEBSITE_CLICKS_CPM_BILLING"}

// HistoryQuery selects the account history of one entity: changes at or
// after Start and before End, optionally only those made by UserID.
type HistoryQuery struct {
	AccountID  string
	EntityType string
	EntityID   string
	Start, End time.Time
	UserID     *int64
}
