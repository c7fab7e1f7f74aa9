// Package activity serves the X Activity API (docs/activity.md): the
// subscriptions of an app to activity events (/2/activity/subscriptions:
// create, list, update, delete one or several), validated by the event
// catalogue of domain/activity.
package activity

import (
	"context"
	"log/slog"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/domain/oauth2"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// DefaultSubscriptionCap is how many subscriptions an app may hold: the
// platform's self-serve figure (enterprise 75,000, partner 150,000).
const DefaultSubscriptionCap = 1500

// SubscriptionStore is the record access of the subscription endpoints
// (storage/postgres.DB).
type SubscriptionStore interface {
	CreateActivitySubscription(ctx context.Context, s storage.ActivitySubscription, max int) (storage.ActivitySubscription, error)
	ActivitySubscriptions(ctx context.Context, q storage.ActivitySubscriptionPage) ([]storage.ActivitySubscription, error)
	ActivitySubscriptionOf(ctx context.Context, appID, id int64) (storage.ActivitySubscription, error)
	CountActivitySubscriptions(ctx context.Context, appID int64) (int, error)
	UpdateActivitySubscription(ctx context.Context, u storage.ActivitySubscriptionUpdate) (storage.ActivitySubscription, error)
	DeleteActivitySubscriptions(ctx context.Context, appID int64, ids []int64) ([]int64, error)
	// UserByID checks that a filter's user exists.
	UserByID(ctx context.Context, id int64) (storage.User, error)
}

// SubscriptionDeps is what the subscription endpoints need.
type SubscriptionDeps struct {
	Store     SubscriptionStore
	Validator *validation.Validator
	Logger    *slog.Logger
	// Cap is how many subscriptions an app may hold
	// (AVIARY_ACTIVITY_SUBSCRIPTION_CAP; 0: DefaultSubscriptionCap).
	Cap int
}

// Subscriptions is the subscriptions feature.
type Subscriptions struct{ SubscriptionDeps }

// NewSubscriptions builds the feature.
func NewSubscriptions(d SubscriptionDeps) *Subscriptions {
	if d.Validator == nil {
		d.Validator = validation.New()
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Cap <= 0 {
		d.Cap = DefaultSubscriptionCap
	}
	return &Subscriptions{SubscriptionDeps: d}
}

// subscriptionsPath is where the subscriptions are served.
const subscriptionsPath = "/2/activity/subscriptions"

// Routes lists the endpoints with the credentials the OpenAPI names
// (docs/activity.md, "Authentication"): create takes app-only and both
// user contexts (a private type's rules are the handler's), listing the
// same with like.read and tweet.read on an OAuth 2.0 user token, update
// and delete an app-only bearer token. Every call sees and changes only
// its app's subscriptions.
func (m *Subscriptions) Routes() []httpx.Endpoint {
	limit := func(name string, n int) httpx.Limit {
		return httpx.Limit{Name: name, Requests: n, Scope: httpx.PerApp}
	}
	return []httpx.Endpoint{
		{Pattern: "POST " + subscriptionsPath, Auth: auth.AppOrUser, Limit: limit("activity_subscriptions_create", 500),
			Body: httpx.JSONBody(httpx.DefaultMaxBody), Handle: m.create},
		{Pattern: "GET " + subscriptionsPath, Auth: auth.AppOrUser.Needs(oauth2.LikeRead, oauth2.TweetRead),
			Limit: limit("activity_subscriptions_list", 100), Query: []string{"max_results", "pagination_token"}, Handle: m.list},
		{Pattern: "PUT " + subscriptionsPath + "/{subscription_id}", Auth: auth.BearerOnly.Writes(),
			Limit: limit("activity_subscriptions_update", 500), Body: httpx.JSONBody(httpx.DefaultMaxBody), Handle: m.update},
		{Pattern: "DELETE " + subscriptionsPath + "/{subscription_id}", Auth: auth.BearerOnly.Writes(),
			Limit: limit("activity_subscriptions_delete", 500), Handle: m.deleteOne},
		{Pattern: "DELETE " + subscriptionsPath, Auth: auth.BearerOnly.Writes(),
			Limit: limit("activity_subscriptions_delete", 500), Query: []string{"ids"}, Handle: m.deleteMany},
	}
}
