package e2e

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/validation"
)

// xdkMediaScript drives Aviary with xdk, pointed at it by baseUrl only
// (OAuth 1.0a user context): the chunked flow initializeUpload ->
// appendUpload -> finalizeUpload -> posts.create, nothing polled in
// between, and the one-shot media.upload -> posts.create. It prints one
// JSON object with the answers (xdk camel-cases their keys).
const xdkMediaScript = `'use strict';
const fs = require('fs');
const { Client, OAuth1, ApiError } = require('@xdevplatform/xdk');

const cfg = JSON.parse(process.env.AVIARY_E2E_INPUT);
async function main() {
  const oauth1 = new OAuth1({ apiKey: cfg.appKey, apiSecret: cfg.appSecret, callback: 'oob',
    accessToken: cfg.accessToken, accessTokenSecret: cfg.accessSecret });
  const client = new Client({ baseUrl: cfg.base, oauth1 });
  const out = {};
  const image = fs.readFileSync(cfg.image);
  const init = await client.media.initializeUpload({ mediaType: 'image/png', totalBytes: image.length, mediaCategory: 'tweet_image' });
  const id = init.data.id;
  await client.media.appendUpload(id, { media: image.toString('base64'), segmentIndex: 0 });
  out.finalize = await client.media.finalizeUpload(id);
  out.chunkedTweet = await client.posts.create({ text: cfg.chunkedText, media: { mediaIds: [id] } });
  out.upload = await client.media.upload({ media: fs.readFileSync(cfg.image2).toString('base64'), mediaCategory: 'tweet_image' });
  out.uploadTweet = await client.posts.create({ text: cfg.uploadText, media: { mediaIds: [out.upload.data.id] } });
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  console.error(e instanceof ApiError ? JSON.stringify({ status: e.status, data: e.data }) : e);
  process.exit(1);
});
`

type xdkMedia struct {
	ID             string         `json:"id"`
	MediaKey       string         `json:"mediaKey"`
	Size           int            `json:"size"`
	ProcessingInfo map[string]any `json:"processingInfo"`
	Image          struct {
		W, H      int
		ImageType string `json:"imageType"`
	} `json:"image"`
}

type xdkTweet struct {
	Data struct{ ID, Text string } `json:"data"`
}

type xdkMediaResult struct {
	Finalize     struct{ Data xdkMedia } `json:"finalize"`
	ChunkedTweet xdkTweet                `json:"chunkedTweet"`
	Upload       struct{ Data xdkMedia } `json:"upload"`
	UploadTweet  xdkTweet                `json:"uploadTweet"`
}

// TestMediaXDKClient (issue 23): with xdk 0.6.6, an image uploaded in
// chunks is attachable the moment finalize answers (no processing_info,
// no STATUS poll), and media.upload's one-shot upload too.
func TestMediaXDKClient(t *testing.T) {
	t.Parallel()
	modules := npmPackage(t, xdkPackage, xdkVersion)
	s := newStack(t, stackOptions{driver: "local", workers: 1})
	dir := t.TempDir()
	image, image2 := pngImage(t, 320, 200), pngImage(t, 64, 80)
	imageFile, image2File := filepath.Join(dir, "chunked.png"), filepath.Join(dir, "oneshot.png")
	for path, data := range map[string][]byte{imageFile: image, image2File: image2} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var res xdkMediaResult
	runNodeScript(t, s, modules, xdkMediaScript, map[string]any{"base": s.baseURL, "image": imageFile, "image2": image2File,
		"chunkedText": "a chunked image from xdk", "uploadText": "a one-shot image from xdk"}, &res)

	for _, c := range []struct {
		label       string
		media       xdkMedia
		size, w, h  int
		tweet       xdkTweet
		wantText    string
		wantEncoded int
	}{
		{"finalize", res.Finalize.Data, len(image), 320, 200, res.ChunkedTweet, "a chunked image from xdk", base64.StdEncoding.EncodedLen(len(image))},
		{"one-shot upload", res.Upload.Data, len(image2), 64, 80, res.UploadTweet, "a one-shot image from xdk", base64.StdEncoding.EncodedLen(len(image2))},
	} {
		m := c.media
		if m.ProcessingInfo != nil || m.Size != c.size || m.Image.W != c.w || m.Image.H != c.h || m.Image.ImageType != "image/png" ||
			!strings.HasPrefix(m.MediaKey, "3_") {
			t.Errorf("%s answered %+v, want no processing_info, size %d, image %dx%d image/png", c.label, m, c.size, c.w, c.h)
		}
		if c.tweet.Data.Text != c.wantText {
			t.Fatalf("%s: post answered %+v, want text %q", c.label, c.tweet, c.wantText)
		}
		postID, ok := validation.ParseID(c.tweet.Data.ID)
		if !ok {
			t.Fatalf("%s: post id %q", c.label, c.tweet.Data.ID)
		}
		s.wantPostMedia(postID, m.ID)
	}
}
