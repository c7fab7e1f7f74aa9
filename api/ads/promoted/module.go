// Package promoted serves the advertising API's promoted tweets endpoints
// (issue 9): the posts a line item promotes.
package promoted

import (
	"context"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
)

// Store is what the promoted endpoints need of storage (*postgres.DB).
type Store interface {
	// ListPromotedTweets returns one page of an account's promoted tweets.
	ListPromotedTweets(ctx context.Context, f storage.PromotedTweetFilter, opts storage.ListOptions) (storage.Page[storage.PromotedTweet], error)
	// PromotedTweet returns one promoted tweet of the account (storage.ErrNotFound).
	PromotedTweet(ctx context.Context, accountID, id string, withDeleted bool) (storage.PromotedTweet, error)
	// CreatePromotedTweets promotes posts on a line item, with history entries.
	CreatePromotedTweets(ctx context.Context, userID int64, accountID, lineItemID string, tweetIDs []int64) ([]storage.PromotedTweet, error)
	// DeletePromotedTweet soft-deletes a promoted tweet, with its history entry.
	DeletePromotedTweet(ctx context.Context, userID int64, accountID, id string) (storage.PromotedTweet, error)
}

// Deps are the module's dependencies.
type Deps = adsx.Deps[Store]

// Module serves the promoted endpoints.
type Module struct {
	deps Deps
}

// New builds the module.
func New(d Deps) *Module { return &Module{deps: d} }

const (
	collection = "/12/accounts/{account_id}/promoted_tweets"
	item       = collection + "/{promoted_tweet_id}"
)

// entity is a promoted tweet in the generic handlers.
var entity = adsx.Entity{PathValue: "promoted_tweet_id", NotFoundCode: codePromotedTweetNotFound}

// Routes lists the module's endpoints.
func (m *Module) Routes() []httpx.Endpoint {
	k, st := m.deps.Kit, m.deps.Store
	list := adsx.List(k, listSpec, func(p *adsx.Params, acct storage.AdAccount) storage.PromotedTweetFilter {
		return storage.PromotedTweetFilter{AccountID: acct.ID, LineItemIDs: p.IDs("line_item_ids"), PromotedTweetIDs: p.IDs("promoted_tweet_ids")}
	}, st.ListPromotedTweets, render)
	return k.Endpoints([]adsx.Route{
		{Pattern: "GET " + collection, Params: listParams, Handle: list},
		{Pattern: "GET " + item, Params: []string{"with_deleted"}, Handle: adsx.Get(k, entity, st.PromotedTweet, render)},
		{Pattern: "POST " + collection, Params: []string{"line_item_id", "tweet_ids"}, Write: true, Handle: m.create},
		{Pattern: "DELETE " + item, Write: true, Handle: adsx.Delete(k, entity, st.DeletePromotedTweet, render)},
	})
}
