package activity

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/domain/activity"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// createRequest is CreateActivitySubscriptionRequest; unknown keys are
// refused (additionalProperties false).
type createRequest struct {
	EventType string         `json:"event_type" validate:"required"`
	Filter    *filterRequest `json:"filter" validate:"required"`
	Tag       *string        `json:"tag" validate:"length=1-200"`
	WebhookID *string        `json:"webhook_id" validate:"coreid"`
}

// filterRequest is CreateActivitySubscriptionFilter.
type filterRequest struct {
	UserID    *string `json:"user_id" validate:"coreid"`
	Keyword   *string `json:"keyword" validate:"length=1-150"`
	Direction *string `json:"direction"`
}

func (m *Subscriptions) create(w http.ResponseWriter, r *http.Request) error {
	var req createRequest
	if err := httpx.Bind(r, m.Validator, &req); err != nil {
		return err
	}
	spec, err := eventType(req.EventType)
	if err != nil {
		return err
	}
	p := httpx.Principal(r)
	sub, err := subscriptionOf(spec, req)
	if err != nil {
		return err
	}
	sub.AppID = p.App.ID
	if p.User != nil {
		sub.CreatedBy = p.User.ID
	}
	if err := m.checkUser(r.Context(), sub.FilterUserID); err != nil {
		return err
	}
	if err := authorize(p, spec, sub.FilterUserID); err != nil {
		return err
	}
	created, err := m.Store.CreateActivitySubscription(r.Context(), sub, m.Cap)
	if err != nil {
		return m.refusal(err, req.WebhookID)
	}
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"subscription": render(created)}})
}

// eventType resolves the request's event type by the catalogue: an
// alias answers as its canonical name; a retired PascalCase name is
// refused naming the new one, an unknown one listing the valid ones.
func eventType(name string) (activity.Spec, error) {
	if spec, ok := activity.Lookup(name); ok {
		return spec, nil
	}
	if now, ok := activity.Retired(name); ok {
		return activity.Spec{}, apierr.InvalidParam("event_type", "The `event_type` value ["+name+
			"] is a retired event type name; event types are named in dot-separated lowercase now: use ["+now+"].", name)
	}
	return activity.Spec{}, apierr.InvalidParam("event_type", "The `event_type` value ["+name+"] is not one of ["+
		strings.Join(activity.Names(), ", ")+"].", name)
}

// subscriptionOf checks the filter against the type's (user_id or
// keyword, direction only where the type takes one) and builds the
// record.
func subscriptionOf(spec activity.Spec, req createRequest) (storage.ActivitySubscription, error) {
	f := req.Filter
	sub := storage.ActivitySubscription{EventType: spec.Name}
	switch spec.Filter {
	case activity.ByKeyword:
		if f.UserID != nil {
			return sub, filterError("filter.user_id", "`"+spec.Name+"` is filtered by keyword, not by user_id.", *f.UserID)
		}
		if f.Keyword == nil {
			return sub, filterError("filter.keyword", "`"+spec.Name+"` needs a keyword filter.")
		}
		sub.FilterKeyword = *f.Keyword
	default:
		if f.Keyword != nil {
			return sub, filterError("filter.keyword", "`"+spec.Name+"` is filtered by user_id, not by keyword.", *f.Keyword)
		}
		if f.UserID == nil {
			return sub, filterError("filter.user_id", "`"+spec.Name+"` needs a user_id filter.")
		}
		sub.FilterUserID, _ = validation.ParseID(*f.UserID)
	}
	if f.Direction != nil {
		if !spec.Direction {
			return sub, filterError("filter.direction", "`"+spec.Name+"` takes no direction filter.", *f.Direction)
		}
		d, ok := activity.Direction(*f.Direction)
		if !ok {
			return sub, filterError("filter.direction", "The `filter.direction` value ["+*f.Direction+"] is not one of [inbound, outbound].", *f.Direction)
		}
		sub.Direction = d
	}
	if req.Tag != nil {
		sub.Tag = *req.Tag
	}
	if req.WebhookID != nil {
		sub.WebhookID, _ = validation.ParseID(*req.WebhookID)
	}
	return sub, nil
}

func filterError(param, message string, values ...string) error {
	return apierr.InvalidParam(param, message, values...)
}

// checkUser refuses a user filter that names no user (or a deleted one).
func (m *Subscriptions) checkUser(ctx context.Context, id int64) error {
	if id == 0 {
		return nil
	}
	u, err := m.Store.UserByID(ctx, id)
	if errors.Is(err, storage.ErrNotFound) || (err == nil && u.DeletedAt != nil) {
		raw := httpx.FormatID(id)
		return apierr.InvalidParam("filter.user_id", "The `filter.user_id` value ["+raw+"] names no user.", raw)
	}
	return err
}

// authorize applies the type's privacy (docs/activity.md,
// "Authentication"): a public type takes app-only or user context (an
// OAuth 2.0 token with tweet.read); a private one a user-context token of
// the filtered user carrying the type's scope. OAuth 1.0a tokens carry
// the scopes of their permissions (auth.Principal.Scopes), which stand in
// for OAuth 2.0 scopes.
func authorize(p auth.Principal, spec activity.Spec, userID int64) error {
	scope := spec.RequiredScope()
	switch {
	case p.Kind() == auth.AppOnly && spec.Private:
		return apierr.UnsupportedAuthentication("`" + spec.Name + "` is a private event type: subscribe with a user-context token " +
			"(OAuth 2.0 with the scope " + scope + ", or OAuth 1.0a) of the user the filter names.")
	case p.Kind() == auth.AppOnly:
		return nil
	case !slices.Contains(p.Scopes, scope):
		return apierr.UnsupportedAuthentication("Your " + credentialLabel(p) + " access token is missing the scope " + scope +
			" that subscribing to `" + spec.Name + "` requires; authorize the app again with it.")
	case spec.Private && p.User.ID != userID:
		id := httpx.FormatID(userID)
		detail := "`" + spec.Name + "` is a private event type: only the user " + id + " may subscribe to their events, with their own token."
		if spec.ActorFilter {
			detail = "`" + spec.Name + "` subscriptions filter by the acting user: filter.user_id must be the authenticated user."
		}
		return apierr.NotAuthorizedForResource("user", id, detail)
	}
	return nil
}

func credentialLabel(p auth.Principal) string {
	if p.Method == auth.MethodOAuth1 {
		return "OAuth 1.0a User Context"
	}
	return "OAuth 2.0 User Context"
}
