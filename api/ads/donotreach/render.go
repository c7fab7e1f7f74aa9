package donotreach

import (
	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/storage"
)

// MinTargetableSize is the fewest entries a list needs to be targetable
// (below it: TOO_SMALL), the platform's audience minimum.
const MinTargetableSize = 100

// Reasons a list is not targetable.
const (
	reasonProcessing = "PROCESSING"
	reasonTooSmall   = "TOO_SMALL"
)

// listJSON is the do-not-reach list object of the reference.
type listJSON struct {
	Targetable           bool     `json:"targetable"`
	Name                 string   `json:"name"`
	Description          *string  `json:"description"`
	ID                   string   `json:"id"`
	ReasonsNotTargetable []string `json:"reasons_not_targetable"`
	CreatedAt            string   `json:"created_at"`
	ListSize             int64    `json:"list_size"`
	UpdatedAt            string   `json:"updated_at"`
	Deleted              bool     `json:"deleted"`
}

// render is l as the API returns it.
func render(l storage.DoNotReachList) listJSON {
	reasons := reasonsNotTargetable(l)
	return listJSON{
		Targetable: len(reasons) == 0 && !l.Deleted, Name: l.Name, Description: l.Description, ID: l.ID,
		ReasonsNotTargetable: reasons, CreatedAt: adsx.Time(l.CreatedAt), ListSize: l.ListSize,
		UpdatedAt: adsx.Time(l.UpdatedAt), Deleted: l.Deleted,
	}
}

// reasonsNotTargetable: PROCESSING while a batch awaits its worker,
// TOO_SMALL below MinTargetableSize unexpired entries.
func reasonsNotTargetable(l storage.DoNotReachList) []string {
	reasons := []string{}
	if l.InFlight {
		reasons = append(reasons, reasonProcessing)
	}
	if l.ListSize < MinTargetableSize {
		reasons = append(reasons, reasonTooSmall)
	}
	return reasons
}
