package adsposts

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/domain/posttext"
	postops "github.com/aviary-dev/aviary/ops/posts"
	"github.com/aviary-dev/aviary/storage"
)

// Bounds of the spec's Limits.
const (
	maxName             = 80
	maxVideoTitle       = 70
	maxVideoDescription = 200
	maxPostPhotos       = 4
)

var (
	conversationSettings = []string{storage.ConversationEveryone, storage.ConversationFollowing, storage.ConversationMentionedUsers}
	tweetModes           = []string{"compat", "extended"}
	videoCTAs            = []string{"VISIT_SITE", "WATCH_NOW"}
)

// createRequest is POST /12/accounts/:id/tweet's parameters once parsed.
type createRequest struct {
	asUser    int64
	text      string
	mediaKeys []string
	nullcast  bool
	trimUser  bool
	mode      string
	post      storage.Post
	ads       storage.AdsPostFields
}

// create makes a post on behalf of as_user_id (docs/ads-posts.md): every
// rule is checked before anything is stored; the post is made through the
// same store path as POST /2/tweets, with its ads fields.
func (m *Module) create(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	req := readCreate(p)
	if err := p.Err(); err != nil {
		return err
	}
	if err := m.checkCreate(r, acct, p, &req); err != nil {
		return err
	}
	app := httpx.Principal(r).App
	post := postops.Compose(req.asUser, app.ID, app.Name, req.text)
	if err := postops.ResolveMentions(r.Context(), m.deps.Store, &post.Entities); err != nil {
		return err
	}
	post.MediaIDs, post.CardURI = req.post.MediaIDs, req.post.CardURI
	req.ads.AccountID = acct.ID
	created, err := m.deps.Store.CreateAdsPost(r.Context(), post, req.ads)
	if errors.Is(err, storage.ErrCardNotFound) {
		return cardNotFound(p, req.post.CardURI)
	}
	if err != nil {
		return fmt.Errorf("create ads post: %w", err)
	}
	o, err := m.renderOptions(r.Context(), req.trimUser, []storage.AdsPost{created})
	if err != nil {
		return err
	}
	o.created, o.compat, o.fullText = true, req.mode == "compat", req.mode == "extended"
	return adsx.WriteData(w, p, http.StatusOK, render(created, o))
}

// readCreate parses every parameter, recording the errors of each on p.
func readCreate(p *adsx.Params) createRequest {
	var req createRequest
	if !p.Has("as_user_id") {
		p.FailMissing("as_user_id", "as_user_id is missing")
	} else if id := p.Int64("as_user_id", 1, math.MaxInt64); id != nil {
		req.asUser = *id
	}
	if t := p.String("text", 0); t != nil {
		req.text = *t
	}
	if c := p.String("card_uri", 0); c != nil {
		req.post.CardURI = *c
	}
	req.ads.ConversationSettings = storage.ConversationEveryone
	if c := p.Enum("conversation_settings", conversationSettings); c != nil {
		req.ads.ConversationSettings = *c
	}
	req.mediaKeys = p.List("media_keys", maxPostPhotos)
	req.ads.Name = p.String("name", maxName)
	req.nullcast = p.Flag("nullcast", true)
	req.ads.Nullcast = req.nullcast
	req.trimUser = p.Flag("trim_user", false)
	if mode := p.Enum("tweet_mode", tweetModes); mode != nil {
		req.mode = *mode
	}
	req.ads.VideoCTA = p.Enum("video_cta", videoCTAs)
	req.ads.VideoCTAValue = p.String("video_cta_value", 0)
	req.ads.VideoDescription = p.String("video_description", maxVideoDescription)
	req.ads.VideoTitle = p.String("video_title", maxVideoTitle)
	return req
}

// checkCreate applies the rules that need more than one parameter, the
// store or the caller: text or media, the post length, the advertiser's
// grant, organic posts, the media and the video fields.
func (m *Module) checkCreate(r *http.Request, acct storage.AdAccount, p *adsx.Params, req *createRequest) error {
	switch {
	case strings.TrimSpace(req.text) == "" && len(req.mediaKeys) == 0:
		p.FailMissing("text", "text is missing: a post needs text unless media_keys is given")
	case posttext.WeightedLength(req.text) > posttext.MaxWeightedLength:
		p.Fail("text", fmt.Sprintf("text is %d characters long as the platform counts them; the limit is %d",
			posttext.WeightedLength(req.text), posttext.MaxWeightedLength))
	case req.post.CardURI != "" && !strings.HasPrefix(req.post.CardURI, "card://"):
		p.Fail("card_uri", fmt.Sprintf("Expected a card URI (card://<id>), got %q for card_uri", req.post.CardURI))
	}
	if err := p.Err(); err != nil {
		return err
	}
	// The advertiser who granted the caller access is the account's owner;
	// the caller may also post as themselves. Another user the owner
	// granted access granted the caller nothing.
	granted := req.asUser == acct.UserID || req.asUser == adsx.UserID(r)
	if granted {
		var err error
		if granted, err = m.deps.Store.IsAdAccountUser(r.Context(), acct.ID, req.asUser); err != nil {
			return err
		}
	}
	if !granted {
		p.Fail("as_user_id", fmt.Sprintf("User %d has not granted access to account %s", req.asUser, acct.ID))
		return p.Err()
	}
	if !req.nullcast && req.asUser != adsx.UserID(r) {
		p.Fail("nullcast", "Organic posts (nullcast=false) can only be made for the authenticated user")
		return p.Err()
	}
	kinds, err := m.media(r.Context(), acct.ID, p, req)
	if err != nil {
		return err
	}
	checkVideoFields(p, req.ads, kinds)
	return p.Err()
}

// media checks media_keys: distinct, live entries of the account's media
// library, processed, up to 4 photos or 1 GIF or 1 video. It sets the
// post's media ids and returns their kinds.
func (m *Module) media(ctx context.Context, accountID string, p *adsx.Params, req *createRequest) ([]string, error) {
	seen := map[string]bool{}
	var kinds []string
	for _, key := range req.mediaKeys {
		if seen[key] {
			p.Fail("media_keys", fmt.Sprintf("Media %s is given twice in media_keys", key))
			return nil, p.Err()
		}
		seen[key] = true
		e, err := m.deps.Store.MediaLibraryEntry(ctx, accountID, key)
		if errors.Is(err, storage.ErrNotFound) {
			p.Fail("media_keys", fmt.Sprintf("Media %s is not in the account's media library", key))
			return nil, p.Err()
		}
		if err != nil {
			return nil, fmt.Errorf("media library entry %s: %w", key, err)
		}
		if e.Media.State != storage.MediaSucceeded {
			p.Fail("media_keys", fmt.Sprintf("Media %s has not been processed successfully (state %s)", key, e.Media.State))
			return nil, p.Err()
		}
		req.post.MediaIDs = append(req.post.MediaIDs, e.Media.ID)
		kinds = append(kinds, e.Media.Kind)
	}
	if len(kinds) > 1 {
		for _, k := range kinds {
			if k != storage.MediaPhoto {
				p.Fail("media_keys", fmt.Sprintf("A post takes up to %d images, or 1 GIF, or 1 video; media_keys names %s",
					maxPostPhotos, strings.Join(kinds, ", ")))
				return nil, p.Err()
			}
		}
	}
	return kinds, nil
}

// checkVideoFields: the video fields describe a video, so they need one
// in media_keys; video_cta and video_cta_value come together.
func checkVideoFields(p *adsx.Params, f storage.AdsPostFields, kinds []string) {
	video := len(kinds) == 1 && kinds[0] == storage.MediaVideo
	for _, v := range []struct {
		name string
		set  bool
	}{{"video_cta", f.VideoCTA != nil}, {"video_cta_value", f.VideoCTAValue != nil},
		{"video_description", f.VideoDescription != nil}, {"video_title", f.VideoTitle != nil}} {
		if v.set && !video {
			p.Fail(v.name, fmt.Sprintf("%s applies to a video post: media_keys must name one video", v.name))
			return
		}
	}
	switch {
	case f.VideoCTA != nil && f.VideoCTAValue == nil:
		p.FailMissing("video_cta_value", "video_cta_value is missing: video_cta needs its value")
	case f.VideoCTAValue != nil && f.VideoCTA == nil:
		p.FailMissing("video_cta", "video_cta is missing: video_cta_value needs its CTA")
	}
}

// cardNotFound is the answer to a card_uri that names no live card of
// the account.
func cardNotFound(p *adsx.Params, uri string) error {
	p.Fail("card_uri", fmt.Sprintf("Card %s does not exist in this account", uri))
	return p.Err()
}

// renderOptions loads the authors of posts unless trimUser.
func (m *Module) renderOptions(ctx context.Context, trimUser bool, posts []storage.AdsPost) (renderOptions, error) {
	o := renderOptions{trimUser: trimUser}
	if trimUser || len(posts) == 0 {
		return o, nil
	}
	var ids []int64
	seen := map[int64]bool{}
	for _, p := range posts {
		if !seen[p.Post.AuthorID] {
			seen[p.Post.AuthorID] = true
			ids = append(ids, p.Post.AuthorID)
		}
	}
	users, err := m.deps.Store.UsersByIDs(ctx, ids)
	if err != nil {
		return o, fmt.Errorf("load authors: %w", err)
	}
	o.authors = make(map[int64]storage.User, len(users))
	for _, u := range users {
		o.authors[u.ID] = u
	}
	if o.metrics, err = m.deps.Store.UserMetrics(ctx, ids); err != nil {
		return o, fmt.Errorf("load author counters: %w", err)
	}
	return o, nil
}
