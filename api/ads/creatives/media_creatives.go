package creatives

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/storage"
)

// Media creative error codes and limits.
const (
	codeMediaCreativeNotFound = "MEDIA_CREATIVE_NOT_FOUND"
	codeLineItemNotFound      = "LINE_ITEM_NOT_FOUND"
	// maxLandingURL caps landing_url.
	maxLandingURL = 2048
	// objectiveWebsiteClicks is the objective whose display creatives
	// need a landing_url.
	objectiveWebsiteClicks = "WEBSITE_CLICKS"
)

// mediaCreativeList is how media creative lists page and sort.
var mediaCreativeList = adsx.ListSpec{
	Listing:  storage.ListingMediaCreatives,
	Sortable: adsx.Sortable{"created_at", "updated_at", "entity_status"},
	Default:  storage.Sort{Field: "created_at"},
}

// mediaCreativeObject is the API's media creative.
type mediaCreativeObject struct {
	ID             string  `json:"id"`
	LineItemID     string  `json:"line_item_id"`
	AccountMediaID string  `json:"account_media_id"`
	CreativeType   string  `json:"creative_type"`
	LandingURL     *string `json:"landing_url"`
	ApprovalStatus string  `json:"approval_status"`
	EntityStatus   string  `json:"entity_status"`
	CreatedAt      string  `json:"created_at"`
	UpdatedAt      string  `json:"updated_at"`
	Deleted        bool    `json:"deleted"`
}

func renderMediaCreative(c storage.MediaCreative) mediaCreativeObject {
	return mediaCreativeObject{ID: c.ID, LineItemID: c.LineItemID, AccountMediaID: c.AccountMediaID,
		CreativeType: c.CreativeType, LandingURL: c.LandingURL, ApprovalStatus: c.ApprovalStatus,
		EntityStatus: c.EntityStatus, CreatedAt: adsx.Time(c.CreatedAt), UpdatedAt: adsx.Time(c.UpdatedAt), Deleted: c.Deleted}
}

// createMediaCreative serves POST .../media_creatives: the account media
// and the line item must be the account's and not deleted. landing_url is
// ignored for PREROLL media and required for other media on a
// WEBSITE_CLICKS line item.
func (m *Module) createMediaCreative(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	n := storage.NewMediaCreative{AccountID: acct.ID, AccountMediaID: p.Required("account_media_id", 64),
		LineItemID: p.Required("line_item_id", 64), LandingURL: landingURL(p)}
	if err := p.Err(); err != nil {
		return err
	}
	ctx := r.Context()
	objective, err := m.deps.Store.LineItemObjective(ctx, acct.ID, n.LineItemID)
	if errors.Is(err, storage.ErrNotFound) {
		return adsx.NotFound(codeLineItemNotFound, "line_item_id", n.LineItemID)
	}
	if err != nil {
		return fmt.Errorf("create media creative: %w", err)
	}
	media, err := m.deps.Store.AccountMedia(ctx, acct.ID, n.AccountMediaID, false)
	if err != nil {
		return accountMedia.Err(n.AccountMediaID, err)
	}
	switch {
	case media.CreativeType == storage.CreativePreroll:
		n.LandingURL = nil
	case objective == objectiveWebsiteClicks && n.LandingURL == nil:
		return adsx.Missing("landing_url")
	}
	c, err := m.deps.Store.CreateMediaCreative(ctx, n)
	if errors.Is(err, storage.ErrNotFound) {
		return adsx.NotFound(codeLineItemNotFound, "line_item_id", n.LineItemID)
	}
	if err != nil {
		return fmt.Errorf("create media creative: %w", err)
	}
	return adsx.WriteData(w, p, http.StatusOK, renderMediaCreative(c))
}

// landingURL is the optional landing_url: an absolute https URL.
func landingURL(p *adsx.Params) *string {
	v := p.String("landing_url", maxLandingURL)
	if v == nil {
		return nil
	}
	u, err := url.Parse(*v)
	if err != nil || !strings.EqualFold(u.Scheme, "https") || u.Host == "" || u.User != nil {
		p.Fail("landing_url", "landing_url must be an absolute https URL")
		return nil
	}
	return v
}
