package main

import (
	"bytes"
	"context"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob"
	"github.com/aviary-dev/aviary/storage/blob/local"
	"github.com/aviary-dev/aviary/storage/postgres"
)

// testBlobs is a local blob store in a temporary directory.
func testBlobs(t *testing.T) blob.Store {
	t.Helper()
	st, err := local.New(local.Options{Dir: t.TempDir(), BaseURL: "http://blobs.invalid"})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// seedPhotoBytes reads the files of the photos res attached, post by post
// (oldest first) and in attachment order.
func seedPhotoBytes(t *testing.T, db *postgres.DB, blobs blob.Store, res seedResult) [][]byte {
	t.Helper()
	ctx := t.Context()
	var out [][]byte
	for _, s := range res.MediaPosts {
		p, err := db.PostByID(ctx, apitest.MustID(t, s))
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range p.MediaIDs {
			m, err := db.Media(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			r, _, err := blobs.Get(ctx, m.OutputKey)
			if err != nil {
				t.Fatalf("photo %s of post %s: %v", m.Key, s, err)
			}
			data, err := io.ReadAll(r)
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, data)
		}
	}
	return out
}

// TestAdminSeedMediaThroughAPI: the seeded photos are what the media
// worker makes of a PNG upload. GET /2/tweets with the media expansion
// shows them as photos of their size, and their processed file, fetched
// through the blob serving route (/blobs/, a presigned URL of the output
// key), is a PNG of that size.
func TestAdminSeedMediaThroughAPI(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := local.New(local.Options{Dir: b.BlobDir, BaseURL: "http://" + ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	blobSrv := httptest.NewUnstartedServer(blobs.Handler())
	blobSrv.Listener.Close()
	blobSrv.Listener = ln
	blobSrv.Start()
	t.Cleanup(blobSrv.Close)
	res, err := seedState(context.Background(), b.DB, blobs, 42)
	if err != nil {
		t.Fatal(err)
	}
	reply := b.Get(t, "/2/tweets?ids="+strings.Join(res.MediaPosts, ",")+
		"&expansions=attachments.media_keys&media.fields=url,type,width,height", b.Bearer)
	if reply.Status != http.StatusOK {
		t.Fatalf("GET /2/tweets = %d %s", reply.Status, reply.Raw)
	}
	posts, _ := reply.Body["data"].([]any)
	if len(posts) != len(res.MediaPosts) {
		t.Fatalf("GET /2/tweets answered %d posts, want the %d with photos: %s", len(posts), len(res.MediaPosts), reply.Raw)
	}
	attached := 0
	for _, p := range posts {
		keys, _ := apitest.Obj(p, "attachments", "media_keys").([]any)
		if len(keys) == 0 {
			t.Errorf("post %v shows no media_keys", apitest.Obj(p, "id"))
		}
		attached += len(keys)
	}
	media, _ := apitest.Obj(reply.Body, "includes", "media").([]any)
	if len(media) != res.Media || attached != res.Media {
		t.Fatalf("includes.media has %d objects, posts name %d keys, want the %d seeded photos: %s", len(media), attached, res.Media, reply.Raw)
	}
	for _, m := range media {
		checkSeededPhoto(t, blobs, m)
	}
}

// checkSeededPhoto checks one rendered media object against its file.
func checkSeededPhoto(t *testing.T, blobs blob.Store, m any) {
	t.Helper()
	key, _ := apitest.Obj(m, "media_key").(string)
	w, _ := apitest.Obj(m, "width").(float64)
	h, _ := apitest.Obj(m, "height").(float64)
	id, ok := strings.CutPrefix(key, "3_")
	if apitest.Obj(m, "type") != storage.MediaPhoto || !ok || h != seedPhotoHeight || (w != 64 && w != 96) {
		t.Errorf("media %v: want a photo (3_<id>) of 64 or 96 x %d", m, seedPhotoHeight)
		return
	}
	url, err := blobs.PresignGet(t.Context(), storage.MediaOutputKey(apitest.MustID(t, id), "png"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("GET %s = %d %s (%v)", url, resp.StatusCode, resp.Header.Get("Content-Type"), err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width != int(w) || cfg.Height != int(h) {
		t.Errorf("file of %s: %dx%d (%v), rendered %vx%v", key, cfg.Width, cfg.Height, err, w, h)
	}
}
