package posts_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestPostMedia: POST /2/tweets attaches media (docs/media-upload.md,
// "Posts"): the author's or shared media that succeeded and has not
// expired, up to 4 photos or 1 GIF or 1 video, a video no longer than the
// author may post. A refused post stores nothing.
func TestPostMedia(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	ctx := context.Background()
	premium := b.AddUser(t, "premium", storage.AccessReadWrite)
	if err := b.DB.SetUserFlag(ctx, premium.ID, "premium", true); err != nil {
		t.Fatal(err)
	}
	image := storage.MediaResult{Width: 100, Height: 100, OutputType: "image/jpeg"}
	minutes := func(n int) storage.MediaResult {
		return storage.MediaResult{Width: 1280, Height: 720, DurationMS: int64(n) * 60_000, OutputType: "video/mp4"}
	}
	photo := func(owner storage.User, shared ...int64) string {
		return fmt.Sprint(apitest.SucceededMedia(t, b.DB, owner, factory.MediaOpts{AdditionalOwners: shared}, image).ID)
	}
	of := func(category string, r storage.MediaResult, owner storage.User, shared ...int64) string {
		return fmt.Sprint(apitest.SucceededMedia(t, b.DB, owner, factory.MediaOpts{Category: category, AdditionalOwners: shared}, r).ID)
	}
	p1, p2, p3, p4, p5 := photo(b.Author), photo(b.Author), photo(b.Author), photo(b.Author), photo(b.Author)
	gif1, gif2 := of(storage.MediaTweetGIF, minutes(0), b.Author), of(storage.MediaTweetGIF, minutes(0), b.Author)
	video := of(storage.MediaTweetVideo, minutes(10), b.Author)
	// 30 minutes: within a premium uploader's 125, over a default author's 20.
	long := of(storage.MediaTweetVideo, minutes(30), premium, b.Author.ID)
	subtitles := of(storage.MediaSubtitles, storage.MediaResult{OutputType: "text/srt"}, b.Author)
	shared := photo(b.User, b.Author.ID)
	notMine := photo(b.User)
	pending := fmt.Sprint(apitest.FinalizedMedia(t, b.DB, b.Author, factory.MediaOpts{}, time.Now()).ID)
	uploading := fmt.Sprint(factory.Media(t, b.DB, &factory.MediaOpts{Owner: &b.Author}).ID)
	failed := apitest.FinalizedMedia(t, b.DB, b.Author, factory.MediaOpts{}, time.Now())
	if err := b.DB.FailMedia(ctx, failed.ID, storage.MediaErrorInvalidMedia, "InvalidMedia", "not a PNG", time.Now()); err != nil {
		t.Fatal(err)
	}
	expired := apitest.FinalizedMedia(t, b.DB, b.Author, factory.MediaOpts{}, time.Now().Add(-storage.MediaUploadTTL-time.Hour))
	if err := b.DB.CompleteMedia(ctx, expired.ID, image, time.Now()); err != nil {
		t.Fatal(err)
	}

	const invalid = apitest.Problems + "invalid-request"
	withMedia := func(ids ...string) map[string]any {
		return map[string]any{"text": "look", "media": map[string]any{"media_ids": ids}}
	}
	tests := []struct {
		name, authz string
		body        map[string]any
		status      int
		typ         string
		params      []string
		want        string   // a substring of the answer; "" skips
		stored      []string // the post's media ids when created
	}{
		{"one photo", "oauth:author", withMedia(p1), 201, "", nil, "", []string{p1}},
		{"four photos, in order", "oauth:author", withMedia(p4, p2, p3, p1), 201, "", nil, "", []string{p4, p2, p3, p1}},
		{"media without text", "oauth:author", map[string]any{"media": map[string]any{"media_ids": []string{p2}}}, 201, "", nil, "", []string{p2}},
		{"media shared with the author", "oauth:author", withMedia(shared), 201, "", nil, "", []string{shared}},
		{"one GIF", "oauth:author", withMedia(gif1), 201, "", nil, "", []string{gif1}},
		{"a video within the limit", "oauth:author", withMedia(video), 201, "", nil, "", []string{video}},
		{"a long video by its premium uploader", "oauth:premium", withMedia(long), 201, "", nil, "", []string{long}},
		{"a long video shared with a default author", "oauth:author", withMedia(long), 403, "about:blank", nil, "the allowed length for your account is 20 minutes", nil},
		{"another user's media", "oauth:author", withMedia(notMine), 400, invalid, []string{"media.media_ids"}, "does not exist or is not yours", nil},
		{"unknown media", "oauth:author", withMedia("42"), 400, invalid, []string{"media.media_ids"}, "does not exist or is not yours", nil},
		{"not finalized", "oauth:author", withMedia(uploading), 400, invalid, []string{"media.media_ids"}, "not finalized", nil},
		{"not processed yet", "oauth:author", withMedia(pending), 400, invalid, []string{"media.media_ids"}, "still processing", nil},
		{"processing failed", "oauth:author", withMedia(fmt.Sprint(failed.ID)), 400, invalid, []string{"media.media_ids"}, "failed processing", nil},
		{"expired", "oauth:author", withMedia(fmt.Sprint(expired.ID)), 400, invalid, []string{"media.media_ids"}, "expired", nil},
		{"subtitles", "oauth:author", withMedia(subtitles), 400, invalid, []string{"media.media_ids"}, "subtitles", nil},
		{"five photos", "oauth:author", withMedia(p1, p2, p3, p4, p5), 400, invalid, []string{"media.media_ids"}, "1 to 4", nil},
		{"no ids", "oauth:author", withMedia(), 400, invalid, []string{"media.media_ids"}, "1 to 4", nil},
		{"photo and video", "oauth:author", withMedia(p1, video), 400, invalid, []string{"media.media_ids"}, "never mixed", nil},
		{"two GIFs", "oauth:author", withMedia(gif1, gif2), 400, invalid, []string{"media.media_ids"}, "never mixed", nil},
		{"the same photo twice", "oauth:author", withMedia(p1, p1), 400, invalid, []string{"media.media_ids"}, "more than once", nil},
		{"malformed id", "oauth:author", withMedia("3_" + p1), 400, invalid, []string{"media.media_ids"}, "does not match", nil},
		{"unknown media field", "oauth:author", map[string]any{"text": "x", "media": map[string]any{"media_ids": []string{p1}, "tagged_user_ids": []string{}}}, 400, invalid, []string{"tagged_user_ids"}, "", nil},
		{"neither text nor media", "oauth:author", map[string]any{"paid_partnership": true}, 400, invalid, []string{"text"}, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before, after int
			b.Query(t, `SELECT count(*) FROM posts`, &before)
			r := b.Call(t, "POST", "/2/tweets", tt.authz, "application/json", apitest.JSONBody(tt.body))
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Raw)
			}
			b.Query(t, `SELECT count(*) FROM posts`, &after)
			if tt.status != 201 {
				if r.Body["type"] != tt.typ || !strings.Contains(r.Raw, tt.want) {
					t.Errorf("problem %s; want type %s mentioning %q", r.Raw, tt.typ, tt.want)
				}
				if got := apitest.ParamNames(r.Body); strings.Join(got, ",") != strings.Join(tt.params, ",") {
					t.Errorf("parameters %v, want %v: %s", got, tt.params, r.Raw)
				}
				if after != before {
					t.Errorf("a refused post was stored (%d posts, then %d)", before, after)
				}
				return
			}
			post, err := b.DB.PostByID(ctx, apitest.MustID(t, r.Body["data"].(map[string]any)["id"].(string)))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, id := range post.MediaIDs {
				got = append(got, fmt.Sprint(id))
			}
			if !slices.Equal(got, tt.stored) || after != before+1 {
				t.Errorf("stored media %v, want %v (%d posts, then %d)", got, tt.stored, before, after)
			}
		})
	}
}
