package audiences

import (
	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/storage"
)

// Targetability (docs/ads-audiences.md).
const (
	// MinTargetableSize is the fewest members an audience needs to be
	// targetable; below it reasons_not_targetable holds TOO_SMALL.
	MinTargetableSize = 100
	reasonProcessing  = "PROCESSING"
	reasonTooSmall    = "TOO_SMALL"
)

// targetableTypes are the ways a CRM audience can be targeted.
var targetableTypes = []string{"CRM", "EXCLUDED_CRM"}

// audienceJSON is the custom audience object of the reference.
type audienceJSON struct {
	ID                   string   `json:"id"`
	Name                 string   `json:"name"`
	Description          *string  `json:"description"`
	AudienceType         string   `json:"audience_type"`
	PartnerSource        string   `json:"partner_source"`
	OwnerAccountID       string   `json:"owner_account_id"`
	PermissionLevel      string   `json:"permission_level"`
	IsOwner              bool     `json:"is_owner"`
	AudienceSize         int64    `json:"audience_size"`
	Targetable           bool     `json:"targetable"`
	TargetableTypes      []string `json:"targetable_types"`
	ReasonsNotTargetable []string `json:"reasons_not_targetable"`
	CreatedAt            string   `json:"created_at"`
	UpdatedAt            string   `json:"updated_at"`
	Deleted              bool     `json:"deleted"`
}

// render is v as the API returns it.
func render(v storage.CustomAudienceView) audienceJSON {
	reasons := reasonsNotTargetable(v.CustomAudience)
	return audienceJSON{
		ID: v.ID, Name: v.Name, Description: v.Description, AudienceType: v.AudienceType, PartnerSource: v.PartnerSource,
		OwnerAccountID: v.OwnerAccountID, PermissionLevel: v.PermissionLevel, IsOwner: v.IsOwner, AudienceSize: v.AudienceSize,
		Targetable: len(reasons) == 0, TargetableTypes: targetableTypes, ReasonsNotTargetable: reasons,
		CreatedAt: adsx.Time(v.CreatedAt), UpdatedAt: adsx.Time(v.UpdatedAt), Deleted: v.Deleted,
	}
}

// reasonsNotTargetable: PROCESSING while a batch awaits its worker,
// TOO_SMALL below MinTargetableSize members.
func reasonsNotTargetable(a storage.CustomAudience) []string {
	reasons := []string{}
	if a.InFlight > 0 {
		reasons = append(reasons, reasonProcessing)
	}
	if a.AudienceSize < MinTargetableSize {
		reasons = append(reasons, reasonTooSmall)
	}
	return reasons
}
