package webhooks

import (
	"errors"
	"net/http"
	"strings"

	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/api/objects"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
)

// Where the stream links are served; the filtered-stream quickstart lists
// them at linksAliasPath, served as the same list.
const (
	linksPath      = "/2/tweets/search/webhooks"
	linksAliasPath = "/2/tweets/search/stream/webhooks"
)

// link is a GetWebhooksStreamLinksResponseData. Aviary's apps have no
// owner account, so business_user_id is never shown.
type link struct {
	ApplicationID  string   `json:"application_id"`
	BusinessUserID string   `json:"business_user_id,omitempty"`
	CreatedAt      string   `json:"created_at"`
	Fields         []string `json:"fields"`
	InstanceID     string   `json:"instance_id"`
	WebhookID      string   `json:"webhook_id"`
}

// link answers POST /2/tweets/search/webhooks/{webhook_id}: the fields and
// expansions are checked as the filtered stream checks them and stored as
// a canonical query; linking again replaces it.
func (m *Module) link(w http.ResponseWriter, r *http.Request) error {
	if _, err := objects.ParseTweetOptions(r); err != nil {
		return err
	}
	id, err := webhookID(r)
	if err != nil {
		return err
	}
	app := httpx.Principal(r).App
	l := storage.WebhookLink{WebhookID: id, AppID: app.ID, Query: render.CanonicalQuery(r.URL.Query())}
	if _, err := m.Store.LinkWebhook(r.Context(), l); errors.Is(err, storage.ErrNotFound) {
		return idInvalid(r.PathValue("webhook_id"))
	} else if err != nil {
		return err
	}
	m.Logger.InfoContext(r.Context(), "webhook linked to the filtered stream", "app_id", app.ID, "webhook_id", id, "query", l.Query)
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{"data": map[string]bool{"provisioned": true}})
}

// links answers GET /2/tweets/search/webhooks: the app's links, oldest
// webhook first; none is {"data": []}, as GET /2/webhooks answers.
func (m *Module) links(w http.ResponseWriter, r *http.Request) error {
	app := httpx.Principal(r).App
	list, err := m.Store.WebhookLinks(r.Context(), app.ID)
	if err != nil {
		return err
	}
	data := make([]link, 0, len(list))
	for _, l := range list {
		fields := []string{}
		if l.Query != "" {
			fields = strings.Split(l.Query, "&")
		}
		data = append(data, link{ApplicationID: httpx.FormatID(app.ID), CreatedAt: httpx.FormatTime(l.CreatedAt), Fields: fields,
			InstanceID: httpx.FormatID(app.ID), WebhookID: httpx.FormatID(l.WebhookID)})
	}
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{"data": data})
}

// unlink answers DELETE /2/tweets/search/webhooks/{webhook_id}: deleted
// true when the link was removed, false when the app's webhook had none
// (as a stream rule delete reports what it did not delete); a webhook that
// is not the app's live one is WebhookIdInvalid.
func (m *Module) unlink(w http.ResponseWriter, r *http.Request) error {
	id, err := webhookID(r)
	if err != nil {
		return err
	}
	deleted, err := m.Store.UnlinkWebhook(r.Context(), httpx.Principal(r).App.ID, id)
	if errors.Is(err, storage.ErrNotFound) {
		return idInvalid(r.PathValue("webhook_id"))
	}
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{"data": map[string]bool{"deleted": deleted}})
}
