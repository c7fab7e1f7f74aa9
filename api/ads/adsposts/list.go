package adsposts

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/storage"
)

// codeTweetNotFound is the ads error code of a post the account does not
// show.
const codeTweetNotFound = "TWEET_NOT_FOUND"

var (
	tweetTypes    = []string{"DRAFT", tweetTypePublished, "SCHEDULED"}
	timelineTypes = []string{storage.TimelineAll, storage.TimelineNullcast, storage.TimelineOrganic}
)

// list answers an account's posts by one of its users (user_id, default
// the account's owner), newest first, with their ads fields. Aviary has
// no drafts or scheduled posts: those tweet types list nothing.
func (m *Module) list(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	tweetType := p.RequiredEnum("tweet_type", tweetTypes)
	f := storage.AdsPostFilter{AuthorID: acct.UserID, Timeline: storage.TimelineNullcast}
	if t := p.Enum("timeline_type", timelineTypes); t != nil {
		f.Timeline = *t
	}
	if n := p.String("name", maxName); n != nil {
		f.NamePrefix = *n
	}
	f.WithMentionsAndReplies = p.Flag("include_mentions_and_replies", false)
	trimUser := p.Flag("trim_user", false)
	f.PostIDs = postIDs(p)
	if u := p.Int64("user_id", 1, math.MaxInt64); u != nil {
		f.AuthorID = *u
	}
	opts := m.deps.Kit.List(p, listSpec)
	if err := p.Err(); err != nil {
		return err
	}
	if f.AuthorID != acct.UserID {
		ok, err := m.deps.Store.IsAdAccountUser(r.Context(), acct.ID, f.AuthorID)
		if err != nil {
			return err
		}
		if !ok {
			p.Fail("user_id", fmt.Sprintf("User %d is not a user of account %s", f.AuthorID, acct.ID))
			return p.Err()
		}
	}
	var page storage.Page[storage.AdsPost]
	if tweetType == tweetTypePublished {
		if page, err = m.deps.Store.ListAdsPosts(r.Context(), acct.ID, f, opts); err != nil {
			return fmt.Errorf("list ads posts: %w", err)
		}
	}
	o, err := m.renderOptions(r.Context(), trimUser, page.Items)
	if err != nil {
		return err
	}
	o.fullText = true
	return adsx.WriteList(w, m.deps.Kit, p, page, func(ap storage.AdsPost) postJSON { return render(ap, o) })
}

// postIDs is the tweet_ids filter: up to 200 post ids.
func postIDs(p *adsx.Params) []int64 {
	items := p.List("tweet_ids", adsx.MaxIDs)
	out := make([]int64, 0, len(items))
	for _, it := range items {
		id, err := strconv.ParseInt(it, 10, 64)
		if err != nil || id <= 0 {
			p.Fail("tweet_ids", fmt.Sprintf("Expected a post id, got %q for tweet_ids", it))
			return nil
		}
		out = append(out, id)
	}
	return out
}

// rename sets (or, without name, clears) the name of a post the account
// shows, and answers the post as reads show it.
func (m *Module) rename(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	raw := r.PathValue("tweet_id")
	id, perr := strconv.ParseInt(raw, 10, 64)
	name := p.String("name", maxName)
	if err := p.Err(); err != nil {
		return err
	}
	if perr != nil || id <= 0 {
		return adsx.NotFound(codeTweetNotFound, "tweet_id", raw)
	}
	p.Echo()["tweet_id"] = id
	post, err := m.deps.Store.SetAdsPostName(r.Context(), acct.ID, id, name)
	if errors.Is(err, storage.ErrNotFound) {
		return adsx.NotFound(codeTweetNotFound, "tweet_id", raw)
	}
	if err != nil {
		return fmt.Errorf("name ads post %d: %w", id, err)
	}
	o, err := m.renderOptions(r.Context(), false, []storage.AdsPost{post})
	if err != nil {
		return err
	}
	o.fullText = true
	return adsx.WriteData(w, p, http.StatusOK, render(post, o))
}
