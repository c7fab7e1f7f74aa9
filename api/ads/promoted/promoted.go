package promoted

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/storage"
)

// Ads error codes of this module (the platform's error table).
const (
	codePromotedTweetNotFound = "PROMOTED_TWEET_NOT_FOUND"
	codeLineItemNotFound      = "LINE_ITEM_NOT_FOUND"
	codeDuplicateTweet        = "DUPLICATE_TWEET"
	codeTweetNotFound         = "TWEET_NOT_FOUND"
)

// Bounds of the reference.
const (
	maxTweetIDs = 50
	maxIDLength = 64
)

var listParams = append([]string{"line_item_ids", "promoted_tweet_ids"}, adsx.ListParams...)

// listSpec sorts promoted tweets by their non-null attributes.
var listSpec = adsx.ListSpec{
	Listing:  storage.ListingPromotedTweets,
	Sortable: adsx.Sortable{"line_item_id", "tweet_id", "entity_status", "approval_status", "created_at", "updated_at"},
	Default:  storage.Sort{Field: "created_at"},
}

// Lists are the module's list specs (checked against the store's columns
// by TestListSpecsMapToColumns in package api).
func (*Module) Lists() []adsx.ListSpec { return []adsx.ListSpec{listSpec} }

// promotedTweetJSON is the promoted tweet object of the reference.
type promotedTweetJSON struct {
	LineItemID     string `json:"line_item_id"`
	ID             string `json:"id"`
	EntityStatus   string `json:"entity_status"`
	CreatedAt      string `json:"created_at"`
	UpdatedAt      string `json:"updated_at"`
	ApprovalStatus string `json:"approval_status"`
	TweetID        string `json:"tweet_id"`
	Deleted        bool   `json:"deleted"`
}

func render(pt storage.PromotedTweet) promotedTweetJSON {
	return promotedTweetJSON{LineItemID: pt.LineItemID, ID: pt.ID, EntityStatus: pt.EntityStatus,
		CreatedAt: adsx.Time(pt.CreatedAt), UpdatedAt: adsx.Time(pt.UpdatedAt), ApprovalStatus: pt.ApprovalStatus,
		TweetID: strconv.FormatInt(pt.TweetID, 10), Deleted: pt.Deleted}
}

// create promotes tweet_ids on line_item_id and answers the new promoted
// tweets as a list (the reference's shape, with total_count). Each post
// must be live and written by a user of the account (TWEET_NOT_FOUND).
func (m *Module) create(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	lineItemID := p.Required("line_item_id", maxIDLength)
	tweetIDs := tweetIDList(p)
	if err := p.Err(); err != nil {
		return err
	}
	created, err := m.deps.Store.CreatePromotedTweets(r.Context(), adsx.UserID(r), acct.ID, lineItemID, tweetIDs)
	var missing *storage.TweetNotFoundError
	switch {
	case errors.As(err, &missing):
		// A post of another user answers as a missing one.
		return adsx.NotFound(codeTweetNotFound, "tweet_ids", strconv.FormatInt(missing.TweetID, 10))
	case errors.Is(err, storage.ErrNotFound):
		return adsx.NotFound(codeLineItemNotFound, "line_item_id", lineItemID)
	case errors.Is(err, storage.ErrDuplicateTweet):
		e := adsx.Invalid("tweet_ids", fmt.Sprintf("A post of tweet_ids is already promoted on line item %s", lineItemID))
		e.AdsCode = codeDuplicateTweet
		return e
	case err != nil:
		return fmt.Errorf("promote posts: %w", err)
	}
	total := int64(len(created))
	return adsx.WriteList(w, m.deps.Kit, p, storage.Page[storage.PromotedTweet]{Items: created, Total: &total}, render)
}

// tweetIDList is the required tweet_ids: 1 to 50 distinct post ids
// (positive integers), echoed as numbers as the reference does.
func tweetIDList(p *adsx.Params) []int64 {
	if !p.Has("tweet_ids") {
		p.FailMissing("tweet_ids", "tweet_ids is missing")
		return nil
	}
	items := p.List("tweet_ids", maxTweetIDs)
	if items == nil {
		return nil
	}
	ids := make([]int64, 0, len(items))
	seen := map[int64]bool{}
	for _, it := range items {
		id, err := strconv.ParseInt(it, 10, 64)
		switch {
		case err != nil || id <= 0:
			p.Fail("tweet_ids", fmt.Sprintf("Expected a post id, got %q for tweet_ids", it))
			return nil
		case seen[id]:
			p.Fail("tweet_ids", fmt.Sprintf("Post %d is given twice in tweet_ids", id))
			return nil
		}
		seen[id] = true
		ids = append(ids, id)
	}
	p.Echo()["tweet_ids"] = ids
	return ids
}
