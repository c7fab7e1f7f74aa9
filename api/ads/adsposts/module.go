// Package adsposts serves the advertising API's posts (issue 30): posts
// made on behalf of an advertiser (POST /12/accounts/:id/tweet), their
// names, and the list of an account's posts with their ads fields
// (docs/ads-posts.md). An ads post is a post: it is stored the way
// POST /2/tweets stores one, with its post.create event, so search,
// streams and activity see it, and GET /2/tweets reads it.
package adsposts

import (
	"context"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/httpx"
	postops "github.com/aviary-dev/aviary/ops/posts"
	"github.com/aviary-dev/aviary/storage"
)

// Store is what the ads posts endpoints need of storage (*postgres.DB).
type Store interface {
	// postops.Store resolves the mentions of a post's text
	// (postops.ResolveMentions).
	postops.Store
	// UsersByIDs and UserMetrics give the authors' user objects.
	UsersByIDs(ctx context.Context, userIDs []int64) ([]storage.User, error)
	UserMetrics(ctx context.Context, ids []int64) (map[int64]storage.UserMetrics, error)
	// IsAdAccountUser reports whether a user may use the account.
	IsAdAccountUser(ctx context.Context, accountID string, userID int64) (bool, error)
	// MediaLibraryEntry is a live entry of the account's media library.
	MediaLibraryEntry(ctx context.Context, accountID, key string) (storage.MediaLibraryEntry, error)
	// CreateAdsPost stores a post and its ads fields, with its post.create
	// event (storage.ErrCardNotFound for a card_uri of no live card).
	CreateAdsPost(ctx context.Context, p storage.Post, f storage.AdsPostFields) (storage.AdsPost, error)
	// SetAdsPostName names a post the account shows (storage.ErrNotFound).
	SetAdsPostName(ctx context.Context, accountID string, id int64, name *string) (storage.AdsPost, error)
	// ListAdsPosts returns one page of an author's posts the account shows.
	ListAdsPosts(ctx context.Context, accountID string, f storage.AdsPostFilter, opts storage.ListOptions) (storage.Page[storage.AdsPost], error)
}

// Deps are the module's dependencies.
type Deps = adsx.Deps[Store]

// Module serves the ads posts endpoints.
type Module struct {
	deps Deps
}

// New builds the module.
func New(d Deps) *Module { return &Module{deps: d} }

const (
	createPath = "/12/accounts/{account_id}/tweet"
	listPath   = "/12/accounts/{account_id}/tweets"
	namePath   = listPath + "/{tweet_id}/name"
)

var createParams = []string{"as_user_id", "text", "card_uri", "conversation_settings", "media_keys", "name", "nullcast",
	"trim_user", "tweet_mode", "video_cta", "video_cta_value", "video_description", "video_title"}

var listParams = []string{"tweet_type", "count", "cursor", "include_mentions_and_replies", "name", "timeline_type",
	"trim_user", "tweet_ids", "user_id"}

// Routes lists the module's endpoints.
func (m *Module) Routes() []httpx.Endpoint {
	return m.deps.Kit.Endpoints([]adsx.Route{
		{Pattern: "POST " + createPath, Params: createParams, Write: true, Handle: m.create},
		{Pattern: "GET " + listPath, Params: listParams, Handle: m.list},
		{Pattern: "PUT " + namePath, Params: []string{"name"}, Write: true, Handle: m.rename},
	})
}

// Lists are the module's list specs (checked against the store's columns
// by TestListSpecsMapToColumns in package api).
func (*Module) Lists() []adsx.ListSpec { return []adsx.ListSpec{listSpec} }

// listSpec pages an account's posts, newest first.
var listSpec = adsx.ListSpec{
	Listing: storage.ListingAdsPosts,
	Default: storage.Sort{Field: "tweet_id", Desc: true},
}
