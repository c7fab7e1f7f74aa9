package adsposts_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/ads/adstest"
	"github.com/aviary-dev/aviary/storage"
)

var legacyTime = regexp.MustCompile(`^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{2} \d{2}:\d{2}:\d{2} \+0000 \d{4}$`)

func id(u storage.User) string { return strconv.FormatInt(u.ID, 10) }

// TestAdsPostCreateReadRename: a nullcast post on behalf of the account's
// owner, answered in the legacy shape without conversation_settings;
// stored as a post with its post.create event; listed with
// conversation_settings; renamed.
func TestAdsPostCreateReadRename(t *testing.T) {
	f := newFixture(t)
	text := "Spring sale #aviary $AVI @" + f.bob.User.Username + " https://example.com/sale"
	r := f.bob.Post(t, f.createPath(), url.Values{"as_user_id": {id(f.alice.User)}, "text": {text}, "name": {"Spring"},
		"conversation_settings": {"following"}, "trim_user": {"true"}}).Status(t, http.StatusOK)
	d := r.Data(t)
	postID := d["id_str"].(string)
	want := map[string]any{"text": text, "name": "Spring", "truncated": false, "nullcast": true, "tweet_type": "PUBLISHED",
		"tweet_id": postID, "retweet_count": float64(0), "favorite_count": float64(0), "favorited": false, "retweeted": false,
		"in_reply_to_status_id": nil, "geo": nil, "coordinates": nil, "place": nil, "contributors": nil,
		"scheduled_status": nil, "scheduled_at": nil}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("%s = %#v, want %#v", k, d[k], v)
		}
	}
	if _, ok := d["conversation_settings"]; ok {
		t.Errorf("the create answer shows conversation_settings: %s", r.Raw)
	}
	if _, ok := d["full_text"]; ok {
		t.Errorf("the create answer shows full_text without tweet_mode=extended: %s", r.Raw)
	}
	if !strings.Contains(r.Raw, `"id":`+postID+`,`) {
		t.Errorf("id is not the post id as a number: %s", r.Raw)
	}
	if !legacyTime.MatchString(d["created_at"].(string)) {
		t.Errorf("created_at = %q, not the legacy form", d["created_at"])
	}
	if scopes := d["scopes"].(map[string]any); scopes["followers"] != false {
		t.Errorf("scopes = %v, want followers false for a nullcast post", scopes)
	}
	if u := d["user"].(map[string]any); len(u) != 2 || u["id_str"] != id(f.alice.User) {
		t.Errorf("trimmed user = %v", u)
	}
	ents := d["entities"].(map[string]any)
	if h := ents["hashtags"].([]any); len(h) != 1 || h[0].(map[string]any)["text"] != "aviary" {
		t.Errorf("hashtags = %v", h)
	}
	if s := ents["symbols"].([]any); len(s) != 1 || s[0].(map[string]any)["text"] != "AVI" {
		t.Errorf("symbols = %v", s)
	}
	if m := ents["user_mentions"].([]any); len(m) != 1 || m[0].(map[string]any)["id_str"] != id(f.bob.User) {
		t.Errorf("user_mentions = %v", m)
	}
	if u := ents["urls"].([]any); len(u) != 1 || u[0].(map[string]any)["expanded_url"] != "https://example.com/sale" {
		t.Errorf("urls = %v", u)
	}
	if !strings.Contains(r.Raw, `"as_user_id":`+id(f.alice.User)) {
		t.Errorf("as_user_id not echoed as a number: %s", r.Raw)
	}

	// stored as a post of alice, with its ads row and post.create event
	var author int64
	var nullcast bool
	var conv string
	var events int
	f.s.Scan(t, `SELECT p.author_id, a.nullcast, a.conversation_settings,
		(SELECT count(*) FROM events e WHERE e.type = 'post.create' AND e.subject_id = p.id)
		FROM posts p JOIN ads_posts a ON a.post_id = p.id WHERE p.id = $1`, []any{postID}, &author, &nullcast, &conv, &events)
	if author != f.alice.User.ID || !nullcast || conv != storage.ConversationFollowing || events != 1 {
		t.Errorf("stored author %d nullcast %v conversation %s events %d", author, nullcast, conv, events)
	}

	// reads show conversation_settings and full_text
	got := f.alice.Get(t, f.listPath(), url.Values{"tweet_type": {"PUBLISHED"}, "tweet_ids": {postID}}).Status(t, http.StatusOK).List(t)
	if len(got) != 1 || got[0]["conversation_settings"] != "FOLLOWING" || got[0]["full_text"] != text || got[0]["name"] != "Spring" {
		t.Fatalf("list = %v", got)
	}
	if u := got[0]["user"].(map[string]any); u["screen_name"] != f.alice.User.Username || !legacyTime.MatchString(u["created_at"].(string)) {
		t.Errorf("full user = %v", u)
	}

	// rename, then clear the name
	rn := f.alice.Put(t, f.listPath()+"/"+postID+"/name", url.Values{"name": {"Summer"}}).Status(t, http.StatusOK)
	if d := rn.Data(t); d["name"] != "Summer" || d["conversation_settings"] != "FOLLOWING" || d["tweet_id"] != postID {
		t.Errorf("rename answered %s", rn.Raw)
	}
	if !strings.Contains(rn.Raw, `"tweet_id":`+postID) {
		t.Errorf("tweet_id not echoed as a number: %s", rn.Raw)
	}
	if d := f.alice.Put(t, f.listPath()+"/"+postID+"/name", nil).Status(t, http.StatusOK).Data(t); d["name"] != nil {
		t.Errorf("name after clearing = %v", d["name"])
	}
}

// TestAdsPostModes: tweet_mode extended writes full_text, compat
// truncates past 140 characters; an untrimmed post carries its author.
func TestAdsPostModes(t *testing.T) {
	f := newFixture(t)
	long := strings.Repeat("word ", 40)
	base := url.Values{"as_user_id": {id(f.alice.User)}, "text": {long}}
	d := f.alice.Post(t, f.createPath(), adstest.With(base, "tweet_mode", "extended")).Status(t, http.StatusOK).Data(t)
	if d["full_text"] != long || d["text"] != nil {
		t.Errorf("extended: text %v full_text %v", d["text"], d["full_text"])
	}
	if u := d["user"].(map[string]any); u["screen_name"] != f.alice.User.Username || u["name"] == nil {
		t.Errorf("untrimmed user = %v", u)
	}
	d = f.alice.Post(t, f.createPath(), adstest.With(base, "tweet_mode", "compat")).Status(t, http.StatusOK).Data(t)
	if txt := d["text"].(string); d["truncated"] != true || len([]rune(txt)) != 140 || !strings.HasSuffix(txt, "…") {
		t.Errorf("compat: truncated %v text %q", d["truncated"], txt)
	}
}

// TestAdsPostOrganic: nullcast=false is allowed for the authenticated
// user only; an organic post's scopes reach followers.
func TestAdsPostOrganic(t *testing.T) {
	f := newFixture(t)
	d := f.bob.Post(t, f.createPath(), url.Values{"as_user_id": {id(f.bob.User)}, "text": {"organic"}, "nullcast": {"false"}}).
		Status(t, http.StatusOK).Data(t)
	if d["nullcast"] != false || d["scopes"].(map[string]any)["followers"] != true {
		t.Errorf("organic post = %v", d)
	}
	r := f.bob.Post(t, f.createPath(), url.Values{"as_user_id": {id(f.alice.User)}, "text": {"organic"}, "nullcast": {"false"}})
	r.Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "nullcast")
}

// TestAdsPostMediaAndCard: library media (up to 4 images, or a video with
// its video fields) and a live card of the account are stored on the
// post.
func TestAdsPostMediaAndCard(t *testing.T) {
	f := newFixture(t)
	imgs := []string{f.libraryMedia(t, storage.MediaTweetImage), f.libraryMedia(t, storage.MediaTweetImage)}
	uri := card(t, f.s, f.acct.ID, false)
	r := f.alice.Post(t, f.createPath(), url.Values{"as_user_id": {id(f.alice.User)}, "media_keys": {strings.Join(imgs, ",")},
		"card_uri": {uri}}).Status(t, http.StatusOK)
	postID := r.Data(t)["id_str"].(string)
	var stored string
	var media int
	f.s.Scan(t, `SELECT card_uri, cardinality(media_ids) FROM posts WHERE id = $1`, []any{postID}, &stored, &media)
	if stored != uri || media != 2 {
		t.Errorf("stored card %q and %d media", stored, media)
	}
	video := f.libraryMedia(t, storage.MediaTweetVideo)
	r = f.alice.Post(t, f.createPath(), url.Values{"as_user_id": {id(f.alice.User)}, "text": {"watch"}, "media_keys": {video},
		"video_cta": {"watch_now"}, "video_cta_value": {"https://example.com"}, "video_title": {"Title"}, "video_description": {"About"}}).
		Status(t, http.StatusOK)
	var cta, title string
	f.s.Scan(t, `SELECT video_cta, video_title FROM ads_posts WHERE post_id = $1`, []any{r.Data(t)["id_str"]}, &cta, &title)
	if cta != "WATCH_NOW" || title != "Title" {
		t.Errorf("video fields stored %q %q", cta, title)
	}
}

// TestAdsPostBadInput breaks each rule of POST .../tweet once: the ads
// error naming the parameter, with its exact message, and nothing stored.
func TestAdsPostBadInput(t *testing.T) {
	f := newFixture(t)
	stranger := f.s.User(t, "carol")
	other := stranger.Account(t)
	img := f.libraryMedia(t, storage.MediaTweetImage)
	imgs := strings.Join([]string{img, f.libraryMedia(t, storage.MediaTweetImage), f.libraryMedia(t, storage.MediaTweetImage),
		f.libraryMedia(t, storage.MediaTweetImage), f.libraryMedia(t, storage.MediaTweetImage)}, ",")
	video := f.libraryMedia(t, storage.MediaTweetVideo)
	gif := f.libraryMedia(t, storage.MediaTweetGIF)
	foreignCard, deletedCard := card(t, f.s, other.ID, false), card(t, f.s, f.acct.ID, true)
	alice := id(f.alice.User)
	base := url.Values{"as_user_id": {alice}, "text": {"hello"}}
	withVideo := adstest.With(base, "media_keys", video)
	cases := []struct {
		name   string
		params url.Values
		code   string
		param  string
		msg    string
	}{
		{"as_user_id missing", adstest.With(base, "as_user_id", ""), "MISSING_PARAMETER", "as_user_id", "as_user_id is missing"},
		{"as_user_id not a number", adstest.With(base, "as_user_id", "alice"), "INVALID_PARAMETER", "as_user_id", `Expected Long, got "alice" for as_user_id`},
		{"as_user_id without access", adstest.With(base, "as_user_id", id(stranger.User)), "INVALID_PARAMETER", "as_user_id",
			"User " + id(stranger.User) + " has not granted access to account " + f.acct.ID},
		{"no text nor media", adstest.With(base, "text", ""), "MISSING_PARAMETER", "text", "text is missing: a post needs text unless media_keys is given"},
		{"text blank", adstest.With(base, "text", "   "), "MISSING_PARAMETER", "text", "text is missing: a post needs text unless media_keys is given"},
		{"text too long", adstest.With(base, "text", strings.Repeat("a", 281)), "INVALID_PARAMETER", "text",
			"text is 281 characters long as the platform counts them; the limit is 280"},
		{"card_uri not a card URI", adstest.With(base, "card_uri", "https://example.com"), "INVALID_PARAMETER", "card_uri",
			`Expected a card URI (card://<id>), got "https://example.com" for card_uri`},
		{"card_uri unknown", adstest.With(base, "card_uri", "card://nope"), "INVALID_PARAMETER", "card_uri", "Card card://nope does not exist in this account"},
		{"card_uri of another account", adstest.With(base, "card_uri", foreignCard), "INVALID_PARAMETER", "card_uri",
			"Card " + foreignCard + " does not exist in this account"},
		{"card_uri deleted", adstest.With(base, "card_uri", deletedCard), "INVALID_PARAMETER", "card_uri",
			"Card " + deletedCard + " does not exist in this account"},
		{"conversation_settings unknown", adstest.With(base, "conversation_settings", "NOBODY"), "INVALID_PARAMETER", "conversation_settings",
			`Expected enum value of [EVERYONE, FOLLOWING, MENTIONED_USERS], got "NOBODY" for conversation_settings`},
		{"media_keys five images", adstest.With(base, "media_keys", imgs), "INVALID_PARAMETER", "media_keys", "media_keys takes at most 4 values, got 5"},
		{"media_keys not in the library", adstest.With(base, "media_keys", "3_1"), "INVALID_PARAMETER", "media_keys",
			"Media 3_1 is not in the account's media library"},
		{"media_keys repeated", adstest.With(base, "media_keys", img+","+img), "INVALID_PARAMETER", "media_keys",
			"Media " + img + " is given twice in media_keys"},
		{"media_keys image and video", adstest.With(base, "media_keys", img+","+video), "INVALID_PARAMETER", "media_keys",
			"A post takes up to 4 images, or 1 GIF, or 1 video; media_keys names photo, video"},
		{"media_keys two GIFs", adstest.With(base, "media_keys", gif+","+f.libraryMedia(t, storage.MediaTweetGIF)), "INVALID_PARAMETER", "media_keys",
			"A post takes up to 4 images, or 1 GIF, or 1 video; media_keys names animated_gif, animated_gif"},
		{"name too long", adstest.With(base, "name", strings.Repeat("n", 81)), "INVALID_PARAMETER", "name", "name must be at most 80 characters"},
		{"nullcast not a boolean", adstest.With(base, "nullcast", "maybe"), "INVALID_PARAMETER", "nullcast", `Expected Boolean, got "maybe" for nullcast`},
		{"organic for another user", adstest.With(base, "nullcast", "false"), "INVALID_PARAMETER", "nullcast",
			"Organic posts (nullcast=false) can only be made for the authenticated user"},
		{"trim_user not a boolean", adstest.With(base, "trim_user", "yes"), "INVALID_PARAMETER", "trim_user", `Expected Boolean, got "yes" for trim_user`},
		{"tweet_mode unknown", adstest.With(base, "tweet_mode", "full"), "INVALID_PARAMETER", "tweet_mode",
			`Expected enum value of [compat, extended], got "full" for tweet_mode`},
		{"video_cta unknown", adstest.With(withVideo, "video_cta", "BUY"), "INVALID_PARAMETER", "video_cta",
			`Expected enum value of [VISIT_SITE, WATCH_NOW], got "BUY" for video_cta`},
		{"video_cta without a video", adstest.With(base, "video_cta", "WATCH_NOW", "video_cta_value", "x"), "INVALID_PARAMETER", "video_cta",
			"video_cta applies to a video post: media_keys must name one video"},
		{"video_cta without its value", adstest.With(withVideo, "video_cta", "WATCH_NOW"), "MISSING_PARAMETER", "video_cta_value",
			"video_cta_value is missing: video_cta needs its value"},
		{"video_cta_value without its CTA", adstest.With(withVideo, "video_cta_value", "https://example.com"), "MISSING_PARAMETER", "video_cta",
			"video_cta is missing: video_cta_value needs its CTA"},
		{"video_description too long", adstest.With(withVideo, "video_description", strings.Repeat("d", 201)), "INVALID_PARAMETER", "video_description",
			"video_description must be at most 200 characters"},
		{"video_description without a video", adstest.With(base, "video_description", "about"), "INVALID_PARAMETER", "video_description",
			"video_description applies to a video post: media_keys must name one video"},
		{"video_title too long", adstest.With(withVideo, "video_title", strings.Repeat("t", 71)), "INVALID_PARAMETER", "video_title",
			"video_title must be at most 70 characters"},
		{"video_title with a GIF", adstest.With(base, "media_keys", gif, "video_title", "title"), "INVALID_PARAMETER", "video_title",
			"video_title applies to a video post: media_keys must name one video"},
	}
	before := f.counts(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := f.bob.Post(t, f.createPath(), c.params) // bob, granted access to alice's account

			r.Fails(t, http.StatusBadRequest, c.code, c.param)
			if msg := r.FirstError().Message; msg != c.msg {
				t.Errorf("message = %q, want %q", msg, c.msg)
			}
		})
	}
	if after := f.counts(t); after != before {
		t.Errorf("refused requests stored rows: posts, ads_posts, post.create events %v -> %v", before, after)
	}
	// another user's account is refused as not found
	f.bob.Post(t, "/12/accounts/"+other.ID+"/tweet", base).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
}

// TestAdsPostsList: the filters of GET .../tweets.
func TestAdsPostsList(t *testing.T) {
	f := newFixture(t)
	alice := id(f.alice.User)
	mk := func(who *adstest.Caller, as string, kv ...string) string {
		v := url.Values{"as_user_id": {as}}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return who.Post(t, f.createPath(), v).Status(t, http.StatusOK).Data(t)["id_str"].(string)
	}
	nullA := mk(f.alice, alice, "text", "first", "name", "Alpha one")
	nullB := mk(f.bob, alice, "text", "second", "name", "beta")
	organic := mk(f.alice, alice, "text", "third", "nullcast", "false")
	mention := mk(f.alice, alice, "text", "@"+f.bob.User.Username+" hi")
	bobs := mk(f.bob, id(f.bob.User), "text", "bob's own")
	idsOf := func(v url.Values) string {
		var out []string
		for _, it := range f.alice.Get(t, f.listPath(), v).Status(t, http.StatusOK).List(t) {
			out = append(out, it["id_str"].(string))
		}
		return strings.Join(out, ",")
	}
	pub := url.Values{"tweet_type": {"PUBLISHED"}}
	checks := []struct {
		name string
		v    url.Values
		want string
	}{
		{"default: nullcast, no mentions", pub, nullB + "," + nullA},
		{"with mentions", adstest.With(pub, "include_mentions_and_replies", "true"), mention + "," + nullB + "," + nullA},
		{"organic", adstest.With(pub, "timeline_type", "ORGANIC"), organic},
		{"all", adstest.With(pub, "timeline_type", "ALL"), organic + "," + nullB + "," + nullA},
		{"name prefix", adstest.With(pub, "name", "alp"), nullA},
		{"tweet_ids", adstest.With(pub, "tweet_ids", nullA+","+organic), nullA},
		{"user_id", adstest.With(pub, "user_id", id(f.bob.User), "timeline_type", "ALL"), bobs},
		{"drafts", adstest.With(pub, "tweet_type", "DRAFT"), ""},
	}
	for _, c := range checks {
		if got := idsOf(c.v); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
	page := f.alice.Get(t, f.listPath(), adstest.With(pub, "count", "1")).Status(t, http.StatusOK)
	if l := page.List(t); len(l) != 1 || l[0]["id_str"] != nullB || page.NextCursor() == "" {
		t.Fatalf("first page %s", page.Raw)
	}
	next := f.alice.Get(t, f.listPath(), adstest.With(pub, "count", "1", "cursor", page.NextCursor())).Status(t, http.StatusOK)
	if l := next.List(t); len(l) != 1 || l[0]["id_str"] != nullA {
		t.Errorf("second page %s", next.Raw)
	}
	bad := []struct {
		v           url.Values
		code, param string
	}{
		{url.Values{}, "MISSING_PARAMETER", "tweet_type"},
		{adstest.With(pub, "tweet_type", "LIVE"), "INVALID_PARAMETER", "tweet_type"},
		{adstest.With(pub, "timeline_type", "X"), "INVALID_PARAMETER", "timeline_type"},
		{adstest.With(pub, "count", "1001"), "INVALID_PARAMETER", "count"},
		{adstest.With(pub, "name", strings.Repeat("n", 81)), "INVALID_PARAMETER", "name"},
		{adstest.With(pub, "tweet_ids", "x"), "INVALID_PARAMETER", "tweet_ids"},
		{adstest.With(pub, "user_id", "1"), "INVALID_PARAMETER", "user_id"},
		{adstest.With(pub, "cursor", "forged"), "INVALID_PARAMETER", "cursor"},
	}
	for _, b := range bad {
		f.alice.Get(t, f.listPath(), b.v).Fails(t, http.StatusBadRequest, b.code, b.param)
	}
}

// TestAdsPostRenameRules: the name rules and which posts an account may
// name.
func TestAdsPostRenameRules(t *testing.T) {
	f := newFixture(t)
	postID := f.alice.Post(t, f.createPath(), url.Values{"as_user_id": {id(f.alice.User)}, "text": {"x"}}).Status(t, http.StatusOK).Data(t)["id_str"].(string)
	path := f.listPath() + "/" + postID + "/name"
	f.alice.Put(t, path, url.Values{"name": {strings.Repeat("n", 81)}}).Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "name")
	f.alice.Put(t, f.listPath()+"/abc/name", url.Values{"name": {"n"}}).Fails(t, http.StatusNotFound, "TWEET_NOT_FOUND", "tweet_id")
	f.alice.Put(t, f.listPath()+"/1/name", url.Values{"name": {"n"}}).Fails(t, http.StatusNotFound, "TWEET_NOT_FOUND", "tweet_id")
	// a post of a user of no account of alice's
	carol := f.s.User(t, "carol")
	carols := carol.Account(t)
	theirs := carol.Post(t, "/12/accounts/"+carols.ID+"/tweet", url.Values{"as_user_id": {id(carol.User)}, "text": {"x"}}).
		Status(t, http.StatusOK).Data(t)["id_str"].(string)
	f.alice.Put(t, f.listPath()+"/"+theirs+"/name", url.Values{"name": {"n"}}).Fails(t, http.StatusNotFound, "TWEET_NOT_FOUND", "tweet_id")
	// a deleted post is gone
	f.s.Exec(t, `UPDATE posts SET deleted_at = $2 WHERE id = $1`, postID, time.Now())
	f.alice.Put(t, path, url.Values{"name": {"n"}}).Fails(t, http.StatusNotFound, "TWEET_NOT_FOUND", "tweet_id")
}
