package media_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob/local"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// fetchPublic GETs a media URL the API rendered through the test server,
// without credentials.
func fetchPublic(t *testing.T, b *apitest.Bundle, url string) (*http.Response, []byte) {
	t.Helper()
	path, ok := strings.CutPrefix(url, apitest.PublicURL)
	if !ok {
		t.Fatalf("url %q is not on %s", url, apitest.PublicURL)
	}
	resp, err := http.Get(b.Srv.URL + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return resp, body
}

// putBlob stores content under key in the bundle's blob store.
func putBlob(t *testing.T, b *apitest.Bundle, key, contentType string, content []byte) {
	t.Helper()
	st, err := local.New(local.Options{Dir: b.BlobDir, BaseURL: "http://blobs.invalid"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(context.Background(), key, bytes.NewReader(content), int64(len(content)), contentType); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

// TestPublicMediaURLs: media.fields=url gives a photo's URL and
// preview_image_url a video's poster; both serve the processed bytes
// without credentials, with the record's type and long-lived caching; the
// answer still matches the OpenAPI description.
func TestPublicMediaURLs(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	router := apitest.OptionalOpenAPI(t)
	seq := time.Now().UnixNano()
	photoKey, posterKey := storage.MediaOutputKey(seq, "png"), storage.MediaPreviewKey(seq+1)
	photoBytes, posterBytes := []byte("\x89PNG processed photo"), []byte("\xff\xd8 poster frame")
	putBlob(t, b, photoKey, "image/png", photoBytes)
	putBlob(t, b, posterKey, "image/jpeg", posterBytes)
	photo := apitest.SucceededMedia(t, b.DB, b.Author, factory.MediaOpts{MediaType: "image/png"},
		storage.MediaResult{Width: 64, Height: 48, OutputType: "image/png", OutputKey: photoKey})
	video := apitest.SucceededMedia(t, b.DB, b.Author, factory.MediaOpts{Category: storage.MediaTweetVideo, MediaType: "video/mp4"},
		storage.MediaResult{Width: 640, Height: 360, DurationMS: 2000, OutputType: "video/mp4",
			OutputKey: storage.MediaOutputKey(seq+1, "mp4"), PreviewKey: posterKey})
	withPhoto := b.Create(t, "oauth:author", map[string]any{"text": "a photo", "media": map[string]any{"media_ids": []string{fmt.Sprint(photo.ID)}}})
	withVideo := b.Create(t, "oauth:author", map[string]any{"text": "a video", "media": map[string]any{"media_ids": []string{fmt.Sprint(video.ID)}}})

	path := "/2/tweets?ids=" + withPhoto + "," + withVideo + "&expansions=attachments.media_keys&media.fields=url,preview_image_url,type"
	r := b.Get(t, path, b.Bearer)
	if r.Status != http.StatusOK {
		t.Fatalf("lookup: %d %s", r.Status, r.Raw)
	}
	if router != nil {
		if err := apitest.ValidateResponse(t.Context(), router, "GET", path, r); err != nil {
			t.Errorf("OpenAPI: %v", err)
		}
	}
	media := map[string]map[string]any{}
	for _, m := range apitest.Obj(r.Body, "includes", "media").([]any) {
		media[apitest.Obj(m, "media_key").(string)] = m.(map[string]any)
	}
	photoURL, _ := media[photo.Key]["url"].(string)
	posterURL, _ := media[video.Key]["preview_image_url"].(string)
	if photoURL != apitest.PublicURL+"/media/"+photo.Key+"/media.png" || media[photo.Key]["preview_image_url"] != nil {
		t.Errorf("photo = %v", media[photo.Key])
	}
	if posterURL != apitest.PublicURL+"/media/"+video.Key+"/preview.jpg" || media[video.Key]["url"] != nil {
		t.Errorf("video = %v", media[video.Key])
	}

	for _, tc := range []struct {
		url, contentType string
		want             []byte
	}{{photoURL, "image/png", photoBytes}, {posterURL, "image/jpeg", posterBytes}} {
		resp, body := fetchPublic(t, b, tc.url)
		if resp.StatusCode != http.StatusOK || !bytes.Equal(body, tc.want) || resp.Header.Get("Content-Type") != tc.contentType {
			t.Errorf("GET %s: %d %q %q, want 200 %q %q", tc.url, resp.StatusCode, resp.Header.Get("Content-Type"), body, tc.contentType, tc.want)
		}
		if cc := resp.Header.Get("Cache-Control"); !strings.Contains(cc, "max-age=31536000") {
			t.Errorf("GET %s: Cache-Control %q", tc.url, cc)
		}
	}

	plain := b.Get(t, "/2/tweets/"+withPhoto+"?expansions=attachments.media_keys", b.Bearer)
	if m := apitest.Obj(plain.Body, "includes", "media", "0").(map[string]any); m["url"] != nil {
		t.Errorf("url without media.fields=url: %v", m)
	}
}

// TestPublicMediaNotFound: media not (yet) processed, an unknown key and a
// file that is not the media's are 404s.
func TestPublicMediaNotFound(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	pending := apitest.FinalizedMedia(t, b.DB, b.Author, factory.MediaOpts{MediaType: "image/png"}, time.Now())
	seq := time.Now().UnixNano()
	key := storage.MediaOutputKey(seq, "png")
	putBlob(t, b, key, "image/png", []byte("png"))
	done := apitest.SucceededMedia(t, b.DB, b.Author, factory.MediaOpts{MediaType: "image/png"},
		storage.MediaResult{Width: 1, Height: 1, OutputType: "image/png", OutputKey: key})
	for _, path := range []string{
		"/media/" + pending.Key + "/media.png",
		"/media/3_999999999/media.png",
		"/media/" + done.Key + "/original",
		"/media/" + done.Key + "/preview.jpg",
	} {
		resp, body := fetchPublic(t, b, apitest.PublicURL+path)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d %s, want 404", path, resp.StatusCode, body)
		}
	}
	if resp, _ := fetchPublic(t, b, apitest.PublicURL+"/media/"+done.Key+"/media.png"); resp.StatusCode != http.StatusOK {
		t.Errorf("succeeded media: %d", resp.StatusCode)
	}
}
