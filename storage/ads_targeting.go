package storage

import "time"

// TargetingCriterion is one targeting rule of a line item.
type TargetingCriterion struct {
	ID             string
	AccountID      string
	LineItemID     string
	Name           *string
	TargetingType  string
	TargetingValue string
	OperatorType   string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	Deleted        bool
}

// Snapshot is the criterion as account history records it.
func (c TargetingCriterion) Snapshot() map[string]any {
	return map[string]any{
		"id":              c.ID,
		"line_item_id":    c.LineItemID,
		"name":            c.Name,
		"targeting_type":  c.TargetingType,
		"targeting_value": c.TargetingValue,
		"operator_type":   c.OperatorType,
		"created_at":      snapshotTime(c.CreatedAt),
		"updated_at":      snapshotTime(c.UpdatedAt),
		"deleted":         c.Deleted,
	}
}

// NewTargetingCriterion is a criterion to create on a non-deleted line
// item of the account. Name defaults to the value when nil.
type NewTargetingCriterion struct {
	AccountID      string
	LineItemID     string
	TargetingType  string
	TargetingValue string
	OperatorType   string
	Name           *string
}

// TargetingCriterionFilter narrows a criteria list of one account.
type TargetingCriterionFilter struct {
	AccountID             string
	LineItemIDs           []string
	TargetingCriterionIDs []string
}

// AudienceTargetingTypes are the targeting types whose value is a custom
// audience id: creating one needs the audience to be usable by the account
// (owned, or granted by a live permission).
var AudienceTargetingTypes = []string{"CUSTOM_AUDIENCE", "CUSTOM_AUDIENCE_EXPANDED"}
