package permissions

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/storage"
)

// targetedParams are the parameters of GET targeted: the reference's
// with_active and cursor, and count as every ads list takes it (default
// 200 campaigns a page, 1 to 1000).
var targetedParams = []string{"with_active", "count", "cursor"}

// targetedSpec pages targeting campaigns oldest first.
var targetedSpec = adsx.ListSpec{Listing: storage.ListingTargetedCampaigns, Default: storage.Sort{Field: "created_at"}}

// targetedJSON is one targeted-audience entry: a campaign and its line
// items that target the audience.
type targetedJSON struct {
	CampaignID   string             `json:"campaign_id"`
	CampaignName string             `json:"campaign_name"`
	LineItems    []targetedLineJSON `json:"line_items"`
}

type targetedLineJSON struct {
	ID       string  `json:"id"`
	Name     *string `json:"name"`
	Servable bool    `json:"servable"`
}

func renderTargeted(c storage.TargetedCampaign) targetedJSON {
	out := targetedJSON{CampaignID: c.ID, CampaignName: c.Name, LineItems: make([]targetedLineJSON, 0, len(c.LineItems))}
	for _, li := range c.LineItems {
		out.LineItems = append(out.LineItems, targetedLineJSON{ID: li.ID, Name: li.Name, Servable: li.Servable})
	}
	return out
}

// targeted serves GET targeted: the path account's campaigns and line
// items that target an audience it owns or is granted; with_active
// (default true) keeps servable line items only.
func (m *Module) targeted(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	k := m.deps.Kit
	acct, err := k.Account(r)
	if err != nil {
		return err
	}
	f := storage.TargetedFilter{AccountID: acct.ID, AudienceID: r.PathValue("custom_audience_id"),
		OnlyServable: p.Flag("with_active", true)}
	opts := k.List(p, targetedSpec)
	if err := p.Err(); err != nil {
		return err
	}
	page, err := m.deps.Store.ListTargetedCampaigns(r.Context(), f, opts)
	switch {
	case errors.Is(err, storage.ErrAudienceNotFound):
		return audienceNotFound("custom_audience_id", f.AudienceID)
	case err != nil:
		return fmt.Errorf("list campaigns targeting audience %s: %w", f.AudienceID, err)
	}
	return adsx.WriteList(w, k, p, page, renderTargeted)
}
