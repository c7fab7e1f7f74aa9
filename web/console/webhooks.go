package console

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
)

// webhooksData is the webhooks page's: each visible app's webhooks.
type webhooksData struct {
	Base
	Hooks []webhookRow
}

type webhookRow struct {
	storage.Webhook
	AppName string
}

func (s *Server) webhooks(w http.ResponseWriter, r *http.Request, v viewer) {
	apps, err := s.visibleApps(r.Context(), v)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	d := webhooksData{Base: s.base(&v, "Webhooks", "webhooks")}
	for _, a := range apps {
		hooks, err := s.store.Webhooks(r.Context(), a.ID)
		if err != nil {
			s.kit.Fail(w, r, err)
			return
		}
		for _, h := range hooks {
			d.Hooks = append(d.Hooks, webhookRow{Webhook: h, AppName: a.Name})
		}
	}
	s.render(w, r, http.StatusOK, "webhooks", "", d)
}

// webhookData is a webhook's page: its delivery log, newest first.
type webhookData struct {
	Base
	App        storage.App
	Hook       storage.Webhook
	Deliveries []storage.WebhookDelivery
	Flash      string
}

// deliveryLogSize is how many deliveries the page shows.
const deliveryLogSize = 50

// visibleWebhook loads the path's {webhook} of the path's visible {app}.
func (s *Server) visibleWebhook(w http.ResponseWriter, r *http.Request, v viewer) (storage.App, storage.Webhook, bool) {
	app, ok := s.visibleApp(w, r, v)
	if !ok {
		return app, storage.Webhook{}, false
	}
	id, err := strconv.ParseInt(r.PathValue("webhook"), 10, 64)
	if err != nil || id <= 0 {
		s.notFound(w, r, v)
		return app, storage.Webhook{}, false
	}
	hook, err := s.store.WebhookOf(r.Context(), app.ID, id)
	if !s.found(w, r, v, err) {
		return app, hook, false
	}
	return app, hook, true
}

func (s *Server) webhook(w http.ResponseWriter, r *http.Request, v viewer) {
	app, hook, ok := s.visibleWebhook(w, r, v)
	if !ok {
		return
	}
	ds, err := s.store.WebhookDeliveries(r.Context(), storage.WebhookDeliveryQuery{AppID: app.ID, WebhookID: hook.ID, Limit: deliveryLogSize})
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	d := webhookData{Base: s.base(&v, "Webhook "+ids.Format(hook.ID), "webhooks"), App: app, Hook: hook, Deliveries: ds}
	if c := r.URL.Query().Get("redelivered"); c != "" {
		d.Flash = "Queued again as delivery " + c + "."
	}
	s.render(w, r, http.StatusOK, "webhook", "", d)
}

// redeliver queues a copy of a delivery, the same storage call as POST
// /2/webhooks/{id}/deliveries/{delivery_id}/redeliver.
func (s *Server) redeliver(w http.ResponseWriter, r *http.Request, v viewer) {
	app, hook, ok := s.visibleWebhook(w, r, v)
	if !ok {
		return
	}
	id, err := strconv.ParseInt(r.PathValue("delivery"), 10, 64)
	if err != nil || id <= 0 {
		s.notFound(w, r, v)
		return
	}
	c, err := s.store.RedeliverWebhookDelivery(r.Context(), app.ID, hook.ID, id)
	if errors.Is(err, storage.ErrNotFound) {
		s.problem(w, r, &v, http.StatusNotFound, "Cannot redeliver", "Only a post or activity delivery of a live webhook can be delivered again.")
		return
	}
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	s.log.InfoContext(r.Context(), "console: webhook delivery redelivered", "app_id", app.ID, "webhook_id", hook.ID, "delivery_id", id, "copy", c.ID)
	http.Redirect(w, r, "/console/apps/"+ids.Format(app.ID)+"/webhooks/"+ids.Format(hook.ID)+"?redelivered="+strconv.FormatInt(c.ID, 10),
		http.StatusSeeOther)
}
