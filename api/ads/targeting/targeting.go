package targeting

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/storage"
)

// Ads error codes of this module (the platform's error table).
const (
	codeTargetingCriterionNotFound = "TARGETING_CRITERION_NOT_FOUND"
	codeLineItemNotFound           = "LINE_ITEM_NOT_FOUND"
	codeUnknownCriteriaType        = "UNKNOWN_CRITERIA_TYPE"
	// codeAudienceNotFound answers an audience targeting_value the account
	// may not target (missing, deleted, neither owned nor granted).
	codeAudienceNotFound = "TAILORED_AUDIENCE_NOT_FOUND"
)

// Bounds.
const (
	maxIDLength = 64
	maxValue    = 1000
)

var (
	listParams   = append([]string{"line_item_ids", "targeting_criterion_ids"}, adsx.ListParams...)
	createParams = []string{"line_item_id", "targeting_type", "targeting_value", "operator_type"}
	operators    = []string{"EQ", "NE", "GTE", "LT"}
)

// TargetingTypes are the targeting_type values of the reference: the
// non-keyword types, the keyword types (and their NEGATIVE_ forms), custom
// audiences, app store categories and app list exclusion.
var TargetingTypes = []string{
	"AGE", "DEVICE", "EVENT", "CAMPAIGN_ENGAGEMENT", "CAMPAIGN_ENGAGEMENT_LOOKALIKE", "CONVERSATION", "ENGAGEMENT_TYPE",
	"FOLLOWERS_OF_USER", "FOLLOWER_LOOK_ALIKES", "GENDER", "INTEREST", "LANGUAGE", "LIVE_TV_EVENT", "LOCATION",
	"NETWORK_ACTIVATION_DURATION", "NETWORK_OPERATOR", "PLATFORM", "PLATFORM_VERSION", "SIMILAR_TO_FOLLOWERS_OF_USER",
	"TV_SHOW", "USER_ENGAGEMENT", "USER_ENGAGEMENT_LOOKALIKE", "WIFI_ONLY",
	"KEYWORD", "BROAD_KEYWORD", "EXACT_KEYWORD", "PHRASE_KEYWORD", "UNORDERED_KEYWORD",
	"NEGATIVE_KEYWORD", "NEGATIVE_BROAD_KEYWORD", "NEGATIVE_EXACT_KEYWORD", "NEGATIVE_PHRASE_KEYWORD", "NEGATIVE_UNORDERED_KEYWORD",
	"NEGATIVE_BEHAVIOR", "CUSTOM_AUDIENCE", "CUSTOM_AUDIENCE_EXPANDED", "APP_STORE_CATEGORY", "APP_STORE_CATEGORY_LOOKALIKE", "APP_LIST",
}

// listSpec sorts criteria by their non-null attributes.
var listSpec = adsx.ListSpec{
	Listing:  storage.ListingTargetingCriteria,
	Sortable: adsx.Sortable{"line_item_id", "targeting_type", "targeting_value", "operator_type", "created_at", "updated_at"},
	Default:  storage.Sort{Field: "created_at"},
}

// Lists are the module's list specs (checked against the store's columns
// by TestListSpecsMapToColumns in package api).
func (*Module) Lists() []adsx.ListSpec { return []adsx.ListSpec{listSpec} }

// criterionJSON is the targeting criterion object of the reference.
type criterionJSON struct {
	LineItemID                string  `json:"line_item_id"`
	Name                      *string `json:"name"`
	ID                        string  `json:"id"`
	OperatorType              string  `json:"operator_type"`
	CreatedAt                 string  `json:"created_at"`
	TargetingValue            string  `json:"targeting_value"`
	TailoredAudienceExpansion bool    `json:"tailored_audience_expansion"`
	UpdatedAt                 string  `json:"updated_at"`
	Deleted                   bool    `json:"deleted"`
	TargetingType             string  `json:"targeting_type"`
}

func render(c storage.TargetingCriterion) criterionJSON {
	return criterionJSON{LineItemID: c.LineItemID, Name: c.Name, ID: c.ID, OperatorType: c.OperatorType,
		CreatedAt: adsx.Time(c.CreatedAt), TargetingValue: c.TargetingValue, UpdatedAt: adsx.Time(c.UpdatedAt),
		Deleted: c.Deleted, TargetingType: c.TargetingType}
}

func (m *Module) create(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	n, err := parseCreate(p, acct.ID)
	if err != nil {
		return err
	}
	c, err := m.deps.Store.CreateTargetingCriterion(r.Context(), adsx.UserID(r), n)
	switch {
	case errors.Is(err, storage.ErrAudienceNotFound):
		return adsx.NotFound(codeAudienceNotFound, "targeting_value", n.TargetingValue)
	case errors.Is(err, storage.ErrNotFound):
		return adsx.NotFound(codeLineItemNotFound, "line_item_id", n.LineItemID)
	case err != nil:
		return fmt.Errorf("create targeting criterion: %w", err)
	}
	return adsx.WriteData(w, p, http.StatusOK, render(c))
}

// parseCreate reads the POST parameters: every parameter error first, then
// an unknown targeting_type (UNKNOWN_CRITERIA_TYPE) and the APP_LIST rule.
func parseCreate(p *adsx.Params, accountID string) (storage.NewTargetingCriterion, error) {
	n := storage.NewTargetingCriterion{
		AccountID:      accountID,
		LineItemID:     p.Required("line_item_id", maxIDLength),
		TargetingType:  strings.ToUpper(p.Required("targeting_type", maxIDLength)),
		TargetingValue: p.Required("targeting_value", maxValue),
		OperatorType:   "EQ",
	}
	if op := p.Enum("operator_type", operators); op != nil {
		n.OperatorType = *op
	}
	if err := p.Err(); err != nil {
		return n, err
	}
	if !slices.Contains(TargetingTypes, n.TargetingType) {
		e := adsx.Invalid("targeting_type", fmt.Sprintf("Unknown targeting_type %q", n.TargetingType), n.TargetingType)
		e.AdsCode = codeUnknownCriteriaType
		return n, e
	}
	p.Echo()["targeting_type"] = n.TargetingType
	if msg := catalogueValue(n.TargetingType, n.TargetingValue); msg != "" {
		return n, adsx.Invalid("targeting_value", msg, n.TargetingValue)
	}
	if n.TargetingType == "APP_LIST" && n.OperatorType != "NE" {
		return n, adsx.Invalid("operator_type", "APP_LIST may only be used with operator_type NE", n.OperatorType)
	}
	return n, nil
}

// parseFilter reads the list's filters: line_item_ids is required.
func parseFilter(p *adsx.Params, acct storage.AdAccount) storage.TargetingCriterionFilter {
	f := storage.TargetingCriterionFilter{AccountID: acct.ID, LineItemIDs: p.IDs("line_item_ids"),
		TargetingCriterionIDs: p.IDs("targeting_criterion_ids")}
	if !p.Has("line_item_ids") {
		p.FailMissing("line_item_ids", "line_item_ids is missing")
	}
	return f
}

// AgeBuckets are the AGE targeting values (the platform's age bucket
// enumeration).
var AgeBuckets = []string{
	"AGE_13_TO_24", "AGE_13_TO_34", "AGE_13_TO_49", "AGE_13_TO_54", "AGE_OVER_13",
	"AGE_18_TO_24", "AGE_18_TO_34", "AGE_18_TO_49", "AGE_18_TO_54", "AGE_OVER_18",
	"AGE_21_TO_34", "AGE_21_TO_49", "AGE_21_TO_54", "AGE_OVER_21",
	"AGE_25_TO_49", "AGE_25_TO_54", "AGE_OVER_25",
	"AGE_35_TO_49", "AGE_35_TO_54", "AGE_OVER_35", "AGE_OVER_50",
}

// catalogueValue says what is wrong with value for a targeting type whose
// values come from a catalogue ("" when it is one of them, or the type
// has no catalogue here): AGE takes an age bucket, LOCATION a country
// (an assigned ISO 3166-1 alpha-2 code, upper case, Aviary's country-level
// values) or a platform location key (16 lower-case hex digits, as
// targeting_criteria/locations lists them). Values are exact: `us` is no
// location, `age_over_18` no bucket.
func catalogueValue(typ, value string) string {
	switch typ {
	case "AGE":
		if !slices.Contains(AgeBuckets, value) {
			return fmt.Sprintf("Expected an age bucket (%s), got %q for targeting_value", strings.Join(AgeBuckets, ", "), value)
		}
	case "LOCATION":
		if !storage.IsCountryCode(value) && !locationKey(value) {
			return fmt.Sprintf("Expected a location: a country code such as US or a location key of 16 lower-case hex digits, got %q for targeting_value", value)
		}
	}
	return ""
}

// locationKey reports whether s has the form of a platform location key.
func locationKey(s string) bool {
	if len(s) != 16 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
