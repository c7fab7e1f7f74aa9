package medialibrary_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/ads/adstest"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// upload records an upload of owner in category; processed drives it
// through the worker's steps to succeeded (1280x720, 15 s).
func upload(t *testing.T, s *adstest.Server, owner storage.User, category string, processed bool, additional ...int64) storage.Media {
	t.Helper()
	ctx, at := t.Context(), time.Now().UTC()
	m := factory.Media(t, s.DB, &factory.MediaOpts{Owner: &owner, Category: category, AdditionalOwners: additional})
	if !processed {
		return m
	}
	if _, err := s.DB.AddMediaSegment(ctx, storage.MediaSegment{MediaID: m.ID, Key: "media/seg", Size: m.TotalBytes}, at); err != nil {
		t.Fatalf("add segment: %v", err)
	}
	if _, err := s.DB.FinalizeMedia(ctx, m.ID, at); err != nil {
		t.Fatalf("finalize: %v", err)
	}
	if _, err := s.DB.StartMediaProcessing(ctx, m.ID, at); err != nil {
		t.Fatalf("start: %v", err)
	}
	res := storage.MediaResult{Width: 1280, Height: 720, DurationMS: 15000, OutputKey: storage.MediaOutputKey(m.ID, "mp4"),
		PreviewKey: storage.MediaPreviewKey(m.ID)}
	if err := s.DB.CompleteMedia(ctx, m.ID, res, at); err != nil {
		t.Fatalf("complete: %v", err)
	}
	return m
}

func keys(items []map[string]any) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i], _ = it["media_key"].(string)
	}
	return out
}

func check(t *testing.T, what string, got map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s = %v, want %v", what, k, got[k], v)
		}
	}
}

// TestMediaLibraryImageLifecycle: add (Untitled, image shape), get, update,
// soft delete with the 404s after it, and adding it again.
func TestMediaLibraryImageLifecycle(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	img := upload(t, s, alice.User, storage.MediaTweetImage, true)
	base := "/12/accounts/" + acct.ID + "/media_library"

	added := alice.Post(t, base, url.Values{"media_key": {img.Key}, "file_name": {"beach.png"}}).Status(t, http.StatusOK)
	check(t, "POST", added.Data(t), map[string]any{"media_key": img.Key, "name": "Untitled", "file_name": "beach.png",
		"title": nil, "description": nil, "media_type": "IMAGE", "media_category": "TWEET_IMAGE",
		"media_status": "TRANSCODE_COMPLETED", "poster_media_key": nil, "poster_media_url": nil, "duration": nil,
		"aspect_ratio": "16:9", "tweeted": false, "deleted": false})
	if p, _ := added.Body["request"].(map[string]any)["params"].(map[string]any); p["media_key"] != img.Key || p["account_id"] != acct.ID {
		t.Errorf("request.params = %v", p)
	}
	check(t, "GET", alice.Get(t, base+"/"+img.Key, nil).Status(t, http.StatusOK).Data(t), map[string]any{"file_name": "beach.png"})
	check(t, "PUT", alice.Put(t, base+"/"+img.Key, url.Values{"name": {"Beach day"}}).Status(t, http.StatusOK).Data(t),
		map[string]any{"name": "Beach day", "file_name": "beach.png"})
	alice.Post(t, base, url.Values{"media_key": {img.Key}}).Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "media_key")

	check(t, "DELETE", alice.Delete(t, base+"/"+img.Key, nil).Status(t, http.StatusOK).Data(t),
		map[string]any{"deleted": true, "name": "Beach day"})
	alice.Get(t, base+"/"+img.Key, nil).Fails(t, http.StatusNotFound, "MEDIA_NOT_FOUND", "media_key")
	alice.Put(t, base+"/"+img.Key, url.Values{"name": {"x"}}).Fails(t, http.StatusNotFound, "MEDIA_NOT_FOUND", "media_key")
	alice.Delete(t, base+"/"+img.Key, nil).Fails(t, http.StatusNotFound, "MEDIA_NOT_FOUND", "media_key")
	if got := alice.Get(t, base, nil).Status(t, http.StatusOK).List(t); len(got) != 0 {
		t.Fatalf("deleted entry listed: %v", got)
	}
	check(t, "re-add", alice.Post(t, base, url.Values{"media_key": {img.Key}}).Status(t, http.StatusOK).Data(t),
		map[string]any{"name": "Untitled", "file_name": nil, "deleted": false})
}

// TestMediaLibraryVideo: the video-only fields, a poster image, duration,
// and tweeted once a post carries the media; an additional owner may add.
func TestMediaLibraryVideo(t *testing.T) {
	s := adstest.New(t)
	alice, bob := s.User(t, "alice"), s.User(t, "bob")
	acct := alice.Account(t)
	video := upload(t, s, bob.User, storage.MediaTweetVideo, true, alice.User.ID)
	poster := upload(t, s, alice.User, storage.MediaTweetImage, true)
	base := "/12/accounts/" + acct.ID + "/media_library"

	got := alice.Post(t, base, url.Values{"media_key": {video.Key}, "title": {"Launch"}, "description": {"Our new thing"},
		"name": {"launch-cut"}, "poster_media_key": {poster.Key}}).Status(t, http.StatusOK).Data(t)
	check(t, "POST", got, map[string]any{"media_type": "VIDEO", "media_category": "TWEET_VIDEO", "title": "Launch",
		"description": "Our new thing", "name": "launch-cut", "poster_media_key": poster.Key, "duration": float64(15000),
		"aspect_ratio": "16:9", "tweeted": false})
	if _, err := s.DB.CreatePost(t.Context(), storage.Post{AuthorID: bob.User.ID, Text: "watch", MediaIDs: []int64{video.ID}}); err != nil {
		t.Fatalf("post: %v", err)
	}
	check(t, "PUT", alice.Put(t, base+"/"+video.Key, url.Values{"title": {"Launch 2"}}).Status(t, http.StatusOK).Data(t),
		map[string]any{"title": "Launch 2", "description": "Our new thing", "poster_media_key": poster.Key, "tweeted": true})
}

// TestMediaLibraryAmplifyPreroll: an AMPLIFY_VIDEO added to the library is
// a PREROLL account media; deleting the entry deletes it too.
func TestMediaLibraryAmplifyPreroll(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	amplify := upload(t, s, alice.User, storage.MediaAmplifyVideo, true)
	tweetVideo := upload(t, s, alice.User, storage.MediaTweetVideo, true)
	base := "/12/accounts/" + acct.ID + "/media_library"
	media := "/12/accounts/" + acct.ID + "/account_media"

	check(t, "POST", alice.Post(t, base, url.Values{"media_key": {amplify.Key}}).Status(t, http.StatusOK).Data(t),
		map[string]any{"media_category": "AMPLIFY_VIDEO", "media_type": "VIDEO"})
	alice.Post(t, base, url.Values{"media_key": {tweetVideo.Key}}).Status(t, http.StatusOK)
	list := alice.Get(t, media, url.Values{"creative_types": {"PREROLL"}}).Status(t, http.StatusOK).List(t)
	if len(list) != 1 {
		t.Fatalf("PREROLL account media = %v, want exactly the amplify video", list)
	}
	check(t, "account media", list[0], map[string]any{"video_id": amplify.Key, "media_url": nil, "creative_type": "PREROLL", "deleted": false})
	id, _ := list[0]["id"].(string)

	alice.Delete(t, base+"/"+amplify.Key, nil).Status(t, http.StatusOK)
	alice.Get(t, media+"/"+id, nil).Fails(t, http.StatusNotFound, "ACCOUNT_MEDIA_NOT_FOUND", "account_media_id")
	check(t, "deleted account media", alice.Get(t, media+"/"+id, url.Values{"with_deleted": {"true"}}).Status(t, http.StatusOK).Data(t),
		map[string]any{"deleted": true})
}

// TestMediaLibraryAddBadInput: every refused POST, with its status, code
// and parameter, and that none of them added anything.
func TestMediaLibraryAddBadInput(t *testing.T) {
	s := adstest.New(t)
	alice, bob := s.User(t, "alice"), s.User(t, "bob")
	acct := alice.Account(t)
	img := upload(t, s, alice.User, storage.MediaTweetImage, true)
	gif := upload(t, s, alice.User, storage.MediaTweetGIF, true)
	video := upload(t, s, alice.User, storage.MediaTweetVideo, true)
	pending := upload(t, s, alice.User, storage.MediaTweetVideo, false)
	dm := upload(t, s, alice.User, storage.MediaDMImage, true)
	bobs := upload(t, s, bob.User, storage.MediaTweetImage, true)
	base := "/12/accounts/" + acct.ID + "/media_library"
	tests := []struct {
		name        string
		params      url.Values
		status      int
		code, param string
	}{
		{"no media_key", url.Values{"name": {"x"}}, 400, "MISSING_PARAMETER", "media_key"},
		{"empty media_key", url.Values{"media_key": {""}}, 400, "INVALID_PARAMETER", "media_key"},
		{"name 101", url.Values{"media_key": {img.Key}, "name": {strings.Repeat("n", 101)}}, 400, "INVALID_PARAMETER", "name"},
		{"file_name 256", url.Values{"media_key": {img.Key}, "file_name": {strings.Repeat("f", 256)}}, 400, "INVALID_PARAMETER", "file_name"},
		{"title 71", url.Values{"media_key": {video.Key}, "title": {strings.Repeat("t", 71)}}, 400, "INVALID_PARAMETER", "title"},
		{"description 201", url.Values{"media_key": {video.Key}, "description": {strings.Repeat("d", 201)}}, 400, "INVALID_PARAMETER", "description"},
		{"title on image", url.Values{"media_key": {img.Key}, "title": {"t"}}, 400, "INVALID_PARAMETER", "title"},
		{"description on GIF", url.Values{"media_key": {gif.Key}, "description": {"d"}}, 400, "INVALID_PARAMETER", "description"},
		{"poster on image", url.Values{"media_key": {img.Key}, "poster_media_key": {img.Key}}, 400, "INVALID_PARAMETER", "poster_media_key"},
		{"another user's media", url.Values{"media_key": {bobs.Key}}, 404, "MEDIA_NOT_FOUND", "media_key"},
		{"unknown media", url.Values{"media_key": {"3_1"}}, 404, "MEDIA_NOT_FOUND", "media_key"},
		{"unprocessed media", url.Values{"media_key": {pending.Key}}, 400, "INVALID_MEDIA", "media_key"},
		{"dm category", url.Values{"media_key": {dm.Key}}, 400, "INVALID_MEDIA", "media_key"},
		{"video poster", url.Values{"media_key": {video.Key}, "poster_media_key": {video.Key}}, 400, "INVALID_MEDIA", "poster_media_key"},
		{"another user's poster", url.Values{"media_key": {video.Key}, "poster_media_key": {bobs.Key}}, 404, "MEDIA_NOT_FOUND", "poster_media_key"},
		{"unknown parameter", url.Values{"media_key": {img.Key}, "media_type": {"IMAGE"}}, 400, "INVALID_PARAMETER", "media_type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			alice.Post(t, base, tc.params).Fails(t, tc.status, tc.code, tc.param)
		})
	}
	if got := alice.Get(t, base, nil).Status(t, http.StatusOK).List(t); len(got) != 0 {
		t.Fatalf("refused requests added %v", keys(got))
	}
	alice.Post(t, base, url.Values{"media_key": {img.Key}}).Status(t, http.StatusOK)
	alice.Put(t, base+"/"+img.Key, url.Values{"title": {"t"}}).Fails(t, 400, "INVALID_PARAMETER", "title")
	alice.Put(t, base+"/"+img.Key, url.Values{"name": {strings.Repeat("n", 101)}}).Fails(t, 400, "INVALID_PARAMETER", "name")
	alice.Put(t, base+"/"+video.Key, url.Values{"name": {"x"}}).Fails(t, 404, "MEDIA_NOT_FOUND", "media_key")
}

// TestMediaLibraryListFilters: media_type and q (case-insensitive terms
// over name, title, file_name and description).
func TestMediaLibraryListFilters(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	base := "/12/accounts/" + acct.ID + "/media_library"
	img := upload(t, s, alice.User, storage.MediaTweetImage, true)
	gif := upload(t, s, alice.User, storage.MediaTweetGIF, true)
	video := upload(t, s, alice.User, storage.MediaTweetVideo, true)
	alice.Post(t, base, url.Values{"media_key": {img.Key}, "name": {"Summer Sale"}}).Status(t, http.StatusOK)
	alice.Post(t, base, url.Values{"media_key": {gif.Key}, "file_name": {"party-cat.gif"}}).Status(t, http.StatusOK)
	alice.Post(t, base, url.Values{"media_key": {video.Key}, "title": {"Flash SALE"}, "description": {"cat video"}}).Status(t, http.StatusOK)
	tests := []struct {
		name   string
		params url.Values
		want   []string
	}{
		{"all", nil, []string{img.Key, gif.Key, video.Key}},
		{"images", url.Values{"media_type": {"IMAGE"}}, []string{img.Key}},
		{"gifs", url.Values{"media_type": {"gif"}}, []string{gif.Key}},
		{"videos", url.Values{"media_type": {"VIDEO"}}, []string{video.Key}},
		{"term any case", url.Values{"q": {"sale"}}, []string{img.Key, video.Key}},
		{"file name term", url.Values{"q": {"CAT"}}, []string{gif.Key, video.Key}},
		{"two terms", url.Values{"q": {"cat sale"}}, []string{video.Key}},
		{"partial word", url.Values{"q": {"sal"}}, nil},
		{"term and type", url.Values{"q": {"cat"}, "media_type": {"GIF"}}, []string{gif.Key}},
	}
	for _, tc := range tests {
		got := keys(alice.Get(t, base, tc.params).Status(t, http.StatusOK).List(t))
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestMediaLibraryListBadInput: each bad list parameter is a 400 naming it.
func TestMediaLibraryListBadInput(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	base := "/12/accounts/" + acct.ID + "/media_library"
	tests := []struct {
		name   string
		params url.Values
		param  string
	}{
		{"unknown media_type", url.Values{"media_type": {"AUDIO"}}, "media_type"},
		{"count 51", url.Values{"count": {"51"}}, "count"},
		{"count 0", url.Values{"count": {"0"}}, "count"},
		{"q 256", url.Values{"q": {strings.Repeat("q", 256)}}, "q"},
		{"empty q", url.Values{"q": {""}}, "q"},
		{"q without words", url.Values{"q": {"!!"}}, "q"},
		{"forged cursor", url.Values{"cursor": {"x.y"}}, "cursor"},
		{"no sort_by", url.Values{"sort_by": {"created_at-asc"}}, "sort_by"},
		{"no with_deleted", url.Values{"with_deleted": {"true"}}, "with_deleted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			alice.Get(t, base, tc.params).Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", tc.param)
		})
	}
	alice.Get(t, base, url.Values{"q": {strings.Repeat("q", 255)}, "count": {"50"}}).Status(t, http.StatusOK)
}

// TestMediaLibraryPagination: count defaults to 20; walking pages of 2
// finds every entry once; a cursor of another query is refused.
func TestMediaLibraryPagination(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	base := "/12/accounts/" + acct.ID + "/media_library"
	want := map[string]bool{}
	for range 21 {
		m := upload(t, s, alice.User, storage.MediaTweetImage, true)
		alice.Post(t, base, url.Values{"media_key": {m.Key}}).Status(t, http.StatusOK)
		want[m.Key] = true
	}
	first := alice.Get(t, base, nil).Status(t, http.StatusOK)
	if n := len(first.List(t)); n != 20 || first.NextCursor() == "" {
		t.Fatalf("default page: %d items, cursor %q; want 20 and a cursor", n, first.NextCursor())
	}
	alice.Get(t, base, url.Values{"cursor": {first.NextCursor()}, "media_type": {"IMAGE"}}).
		Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "cursor")
	seen := map[string]bool{}
	params := url.Values{"count": {"2"}}
	for pages := 0; ; pages++ {
		if pages > 11 {
			t.Fatal("too many pages")
		}
		r := alice.Get(t, base, params).Status(t, http.StatusOK)
		for _, k := range keys(r.List(t)) {
			if seen[k] || !want[k] {
				t.Fatalf("entry %s seen twice or unexpected", k)
			}
			seen[k] = true
		}
		if r.NextCursor() == "" {
			break
		}
		params.Set("cursor", r.NextCursor())
	}
	if len(seen) != len(want) {
		t.Fatalf("saw %d entries, want %d", len(seen), len(want))
	}
}

// TestMediaLibraryTenancy: another user's account is ACCOUNT_NOT_FOUND on
// every route; an entry of another account is MEDIA_NOT_FOUND, like a
// missing one.
func TestMediaLibraryTenancy(t *testing.T) {
	s := adstest.New(t)
	alice, bob := s.User(t, "alice"), s.User(t, "bob")
	acct, bobs := alice.Account(t), bob.Account(t)
	bobsImg := upload(t, s, bob.User, storage.MediaTweetImage, true)
	bob.Post(t, "/12/accounts/"+bobs.ID+"/media_library", url.Values{"media_key": {bobsImg.Key}}).Status(t, http.StatusOK)
	theirs := "/12/accounts/" + bobs.ID + "/media_library"
	alice.Get(t, theirs, nil).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
	alice.Get(t, theirs+"/"+bobsImg.Key, nil).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
	alice.Post(t, theirs, url.Values{"media_key": {bobsImg.Key}}).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
	alice.Put(t, theirs+"/"+bobsImg.Key, url.Values{"name": {"x"}}).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
	alice.Delete(t, theirs+"/"+bobsImg.Key, nil).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
	mine := "/12/accounts/" + acct.ID + "/media_library/"
	for _, key := range []string{bobsImg.Key, "3_42"} {
		alice.Get(t, mine+key, nil).Fails(t, http.StatusNotFound, "MEDIA_NOT_FOUND", "media_key")
		alice.Delete(t, mine+key, nil).Fails(t, http.StatusNotFound, "MEDIA_NOT_FOUND", "media_key")
	}
	bob.Get(t, theirs+"/"+bobsImg.Key, nil).Status(t, http.StatusOK)
}
