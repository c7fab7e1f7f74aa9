package webhooks

import (
	"context"
	"errors"
	"net/http"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
	domain "github.com/aviary-dev/aviary/domain/webhooks"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// configFields are the WebhookConfig fields: all shown by default, so
// webhook_config.fields is checked but adds nothing.
var configFields = httpx.ObjectFields{
	Default: []string{"created_at", "id", "url", "valid"},
	Allowed: []string{"created_at", "id", "url", "valid"},
}

// config is a WebhookConfig as the API shows it.
type config struct {
	ID        string `json:"id"`
	URL       string `json:"url"`
	Valid     bool   `json:"valid"`
	CreatedAt string `json:"created_at"`
}

func (m *Module) render(w storage.Webhook) config {
	return config{ID: httpx.FormatID(w.ID), URL: w.URL, Valid: domain.EffectiveValid(w, m.Clock()),
		CreatedAt: httpx.FormatTime(w.CreatedAt)}
}

type createRequest struct {
	URL string `json:"url"`
}

func (m *Module) create(w http.ResponseWriter, r *http.Request) error {
	var req createRequest
	if err := httpx.Bind(r, m.Validator, &req); err != nil {
		return err
	}
	if err := domain.CheckURL(req.URL, m.Allow.Allows); err != nil {
		return failure(ReasonURL, "url", err.Error(), req.URL)
	}
	app := httpx.Principal(r).App
	if err := m.admit(r.Context(), app.ID, req.URL); err != nil {
		return err
	}
	at := m.Clock()
	if o := domain.CheckWithFaults(r.Context(), m.Faults, app.ID, m.Client, req.URL, app.ConsumerSecret); !o.OK {
		m.Logger.InfoContext(r.Context(), "webhook CRC failed at registration", "app_id", app.ID, "failure", o.Failure)
		return failure(ReasonCRC, "url", "The URL did not answer the CRC check correctly: "+o.Failure+".", req.URL)
	}
	hook, err := m.Store.CreateWebhook(r.Context(), storage.WebhookCreate{AppID: app.ID, URL: req.URL, CheckedAt: at, Max: m.Max})
	if err != nil {
		return m.createError(err, req.URL)
	}
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{"data": m.render(hook)})
}

// admit refuses a URL the app has registered already and a registration
// over the cap before the CRC check is sent (CreateWebhook checks both
// again, exactly).
func (m *Module) admit(ctx context.Context, appID int64, url string) error {
	hooks, err := m.Store.Webhooks(ctx, appID)
	if err != nil {
		return err
	}
	for _, h := range hooks {
		if h.URL == url {
			return m.createError(storage.ErrDuplicateWebhookURL, url)
		}
	}
	if len(hooks) >= m.Max {
		return m.createError(storage.ErrWebhookLimit, url)
	}
	return nil
}

func (m *Module) createError(err error, url string) error {
	switch {
	case errors.Is(err, storage.ErrDuplicateWebhookURL):
		return failure(ReasonDuplicate, "url", "A webhook with this URL is already registered by your app.", url)
	case errors.Is(err, storage.ErrWebhookLimit):
		return failure(ReasonLimit, "url", "Your app has reached its limit of webhooks.", url)
	}
	return err
}

func (m *Module) list(w http.ResponseWriter, r *http.Request) error {
	if _, err := httpx.Fields(r, "webhook_config.fields", configFields); err != nil {
		return err
	}
	hooks, err := m.Store.Webhooks(r.Context(), httpx.Principal(r).App.ID)
	if err != nil {
		return err
	}
	data := make([]config, 0, len(hooks))
	for _, h := range hooks {
		data = append(data, m.render(h))
	}
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{"data": data, "meta": map[string]int{"result_count": len(data)}})
}

// validate runs a CRC check of the webhook now: a pass makes it valid
// again; a failure is recorded like the sweeper's and answered with
// CrcValidationFailed.
func (m *Module) validate(w http.ResponseWriter, r *http.Request) error {
	app := httpx.Principal(r).App
	hook, err := m.webhook(r, app.ID)
	if err != nil {
		return err
	}
	at := m.Clock()
	o := domain.CheckWithFaults(r.Context(), m.Faults, app.ID, m.Client, hook.URL, app.ConsumerSecret)
	hook, err = m.Store.RecordWebhookCRC(context.WithoutCancel(r.Context()), domain.Record(hook, o, at))
	if errors.Is(err, storage.ErrNotFound) {
		return idInvalid(r.PathValue("webhook_id"))
	}
	if err != nil {
		return err
	}
	if !o.OK {
		return failure(ReasonCRC, "webhook_id", "The webhook URL did not answer the CRC check correctly: "+o.Failure+".", r.PathValue("webhook_id"))
	}
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{"data": map[string]bool{"valid": domain.EffectiveValid(hook, at)}})
}

func (m *Module) delete(w http.ResponseWriter, r *http.Request) error {
	app := httpx.Principal(r).App
	id, err := webhookID(r)
	if err != nil {
		return err
	}
	if err := m.Store.DeleteWebhook(r.Context(), app.ID, id); errors.Is(err, storage.ErrNotFound) {
		return idInvalid(r.PathValue("webhook_id"))
	} else if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{"data": map[string]bool{"deleted": true}})
}

// webhook loads the app's webhook named by the path (WebhookIdInvalid for
// none, another app's or a deleted one: the answers do not differ).
func (m *Module) webhook(r *http.Request, appID int64) (storage.Webhook, error) {
	id, err := webhookID(r)
	if err != nil {
		return storage.Webhook{}, err
	}
	hook, err := m.Store.WebhookOf(r.Context(), appID, id)
	if errors.Is(err, storage.ErrNotFound) {
		return hook, idInvalid(r.PathValue("webhook_id"))
	}
	return hook, err
}

// webhookID parses the path's webhook_id (^[0-9]{1,19}$).
func webhookID(r *http.Request) (int64, error) {
	raw := r.PathValue("webhook_id")
	id, ok := validation.ParseID(raw)
	if !ok {
		return 0, apierr.InvalidParam("webhook_id", "The `webhook_id` path parameter value ["+raw+"] is not valid (1 to 19 digits).", raw)
	}
	return id, nil
}

func idInvalid(raw string) error {
	return failure(ReasonIDInvalid, "webhook_id", "The webhook_id was not found or is not associated with your app.", raw)
}
