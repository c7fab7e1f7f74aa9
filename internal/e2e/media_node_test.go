package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/validation"
)

// The npm client github.com/PLhery/node-twitter-api-v2, installed at test
// time (pinned) into a cache directory reused across runs.
const (
	twitterAPIV2Package = "twitter-api-v2"
	twitterAPIV2Version = "1.29.1"
)

var npmMu sync.Mutex // one install at a time in this process (flock: across processes)

// npmCacheDir is where a pinned package is installed: AVIARY_NPM_DIR, or
// AVIARY_TOOLS_DIR/npm, or the user cache directory's aviary/npm.
func npmCacheDir(t testing.TB, pkg, version string) string {
	t.Helper()
	base := os.Getenv("AVIARY_NPM_DIR")
	if base == "" && os.Getenv("AVIARY_TOOLS_DIR") != "" {
		base = filepath.Join(os.Getenv("AVIARY_TOOLS_DIR"), "npm")
	}
	if base == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Fatalf("no cache directory for npm packages (set AVIARY_NPM_DIR): %v", err)
		}
		base = filepath.Join(cache, "aviary", "npm")
	}
	return filepath.Join(base, pkg+"@"+version)
}

// twitterAPIV2 installs twitter-api-v2@1.29.1 and returns its node_modules
// directory.
func twitterAPIV2(t *testing.T) string {
	t.Helper()
	return npmPackage(t, twitterAPIV2Package, twitterAPIV2Version)
}

// npmPackage installs pkg@version once (npm install, under a lock shared by
// parallel tests and test processes) and returns its node_modules
// directory. Without node and npm the test is skipped.
func npmPackage(t *testing.T, pkg, version string) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the %s client test needs node 20 and npm", tool, pkg)
		}
	}
	dir := npmCacheDir(t, pkg, version)
	modules := filepath.Join(dir, "node_modules")
	npmMu.Lock()
	defer npmMu.Unlock()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".install.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatalf("lock %s: %v", lock.Name(), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing releases it too
	if installedVersion(modules, pkg) == version {
		return modules
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"private": true}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", pkg+"@"+version)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install %s@%s in %s: %v\n%s", pkg, version, dir, err, out)
	}
	if v := installedVersion(modules, pkg); v != version {
		t.Fatalf("npm installed %s version %q, want %s", pkg, v, version)
	}
	return modules
}

func installedVersion(modules, pkg string) string {
	raw, err := os.ReadFile(filepath.Join(modules, pkg, "package.json"))
	if err != nil {
		return ""
	}
	var pkgJSON struct {
		Version string `json:"version"`
	}
	_ = json.Unmarshal(raw, &pkgJSON)
	return pkgJSON.Version
}

// twitterAPIV2Script drives Aviary with twitter-api-v2 like an application
// does; the only addition is a plugin that points the library's fixed
// https://api.x.com/2/ prefix at Aviary (onBeforeRequestConfig runs before
// the request is signed, so the OAuth 1.0a signature covers Aviary's URL).
// It prints one JSON object with the results and the requests it made.
const twitterAPIV2Script = `'use strict';
const fs = require('fs');
const { TwitterApi, ApiResponseError } = require('twitter-api-v2');

const cfg = JSON.parse(process.env.AVIARY_E2E_INPUT);
const prefix = 'https://api.x.com/2/';
const requests = [];
const aviary = {
  onBeforeRequestConfig({ params }) {
    if (!params.url.startsWith(prefix)) throw new Error('unexpected URL ' + params.url);
    params.url = cfg.base + '/2/' + params.url.slice(prefix.length);
  },
  onBeforeRequest({ computedParams }) {
    const u = computedParams.url;
    const command = u.searchParams.get('command');
    requests.push(computedParams.method + ' ' + u.pathname + (command ? ' ' + command : ''));
  },
};

async function main() {
  const client = new TwitterApi(
    { appKey: cfg.appKey, appSecret: cfg.appSecret, accessToken: cfg.accessToken, accessSecret: cfg.accessSecret },
    { plugins: [aviary] });
  const out = { requests };
  const video = fs.readFileSync(cfg.video);
  out.videoId = await client.v2.uploadMedia(video, { media_type: 'video/mp4', media_category: 'tweet_video' });
  out.videoTweet = await client.v2.tweet({ text: cfg.videoText, media: { media_ids: [out.videoId] } });
  const image = fs.readFileSync(cfg.image);
  out.imageId = await client.v2.uploadMedia(image, { media_type: 'image/png' });
  out.imageTweet = await client.v2.tweet({ text: cfg.imageText, media: { media_ids: [out.imageId] } });
  try {
    await client.v2.tweet({ text: 'unknown media', media: { media_ids: [cfg.unknownId] } });
    out.unknownMedia = { error: 'no error' };
  } catch (e) {
    out.unknownMedia = e instanceof ApiResponseError ? { code: e.code, data: e.data } : { error: String(e) };
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  console.error(e instanceof ApiResponseError ? JSON.stringify({ code: e.code, data: e.data, request: requests }) : e);
  process.exit(1);
});
`

// twitterAPIV2Result is what the script prints.
type twitterAPIV2Result struct {
	Requests   []string `json:"requests"`
	VideoID    string   `json:"videoId"`
	ImageID    string   `json:"imageId"`
	VideoTweet struct {
		Data struct{ ID, Text string } `json:"data"`
	} `json:"videoTweet"`
	ImageTweet struct {
		Data struct{ ID, Text string } `json:"data"`
	} `json:"imageTweet"`
	UnknownMedia struct {
		Code  int            `json:"code"`
		Data  map[string]any `json:"data"`
		Error string         `json:"error"`
	} `json:"unknownMedia"`
}

// runTwitterAPIV2 runs the script with node against s (an https stack:
// the library only speaks https) and decodes its output.
func runTwitterAPIV2(t *testing.T, s *stack, tlsCert string, input map[string]any) twitterAPIV2Result {
	t.Helper()
	input["base"] = s.baseURL
	var res twitterAPIV2Result
	runNodeScript(t, s, twitterAPIV2(t), twitterAPIV2Script, input, &res, "NODE_EXTRA_CA_CERTS="+tlsCert)
	return res
}

// runNodeScript runs script with node and the packages in modules, passing
// input (plus the stack's demo credentials) as JSON in AVIARY_E2E_INPUT,
// and decodes the JSON the script prints into out.
func runNodeScript(t *testing.T, s *stack, modules, script string, input map[string]any, out any, env ...string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.js")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	input["appKey"], input["appSecret"] = s.creds.ConsumerKey, s.creds.ConsumerSecret
	input["accessToken"], input["accessSecret"] = s.creds.AccessToken, s.creds.AccessTokenSecret
	raw, _ := json.Marshal(input)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", path)
	cmd.Env = append(append(os.Environ(), "NODE_PATH="+modules, "AVIARY_E2E_INPUT="+string(raw)), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node script: %v\nstdout: %s\nstderr: %s", err, stdout.Bytes(), stderr.Bytes())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("decode script output %q: %v (stderr %s)", stdout.Bytes(), err, stderr.Bytes())
	}
}

// TestMediaTwitterAPIV2Client drives chunked upload with the npm client
// twitter-api-v2 1.29.1, pointed at Aviary (over https, as the library
// requires) and nothing else changed: uploadMedia of a ~2 MB MP4 (initialize,
// multipart appends of 1 MB chunks, finalize without a body, STATUS polled
// until succeeded) and of a PNG, then v2.tweet with each media id; the
// library must also surface a 400 for an unknown media id.
func TestMediaTwitterAPIV2Client(t *testing.T) {
	t.Parallel()
	tlsFiles := newTLSFiles(t)
	s := newStack(t, stackOptions{driver: "local", workers: 1, tls: tlsFiles})
	dir := t.TempDir()
	video := noisyVideo(t, dir, 3)
	image := pngImage(t, 320, 200)
	videoFile, imageFile := filepath.Join(dir, "upload.mp4"), filepath.Join(dir, "upload.png")
	if err := os.WriteFile(videoFile, video, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(imageFile, image, 0o644); err != nil {
		t.Fatal(err)
	}
	const chunk = 1 << 20
	if len(video) < 2*chunk {
		t.Fatalf("generated video is %d bytes; want several 1 MB chunks", len(video))
	}
	res := runTwitterAPIV2(t, s, tlsFiles.cert, map[string]any{"video": videoFile, "image": imageFile,
		"videoText": "a video from twitter-api-v2", "imageText": "an image from twitter-api-v2", "unknownId": "1234567890123"})

	// The library's own calls, in order: the chunked protocol as the
	// documentation describes it, and the posts.
	appends := func(id string, n int) []string {
		out := []string{"POST /2/media/upload/initialize"}
		for range n {
			out = append(out, "POST /2/media/upload/"+id+"/append")
		}
		return append(out, "POST /2/media/upload/"+id+"/finalize")
	}
	var want []string
	want = append(want, appends(res.VideoID, (len(video)+chunk-1)/chunk)...)
	calls := strings.Join(res.Requests, "\n")
	if !strings.HasPrefix(calls, strings.Join(want, "\n")+"\nGET /2/media/upload STATUS") {
		t.Errorf("video upload calls:\n%s\nwant to start with:\n%s\nand poll STATUS", calls, strings.Join(want, "\n"))
	}
	for _, seq := range [][]string{{"POST /2/tweets"}, appends(res.ImageID, 1)} {
		if !strings.Contains(calls, strings.Join(seq, "\n")) {
			t.Errorf("calls:\n%s\nwant them to contain:\n%s", calls, strings.Join(seq, "\n"))
		}
	}

	tok := s.demoToken()
	videoData := s.waitMedia(tok, s.baseURL, res.VideoID, 10*time.Second) // final already: uploadMedia returned
	wantSucceeded(t, videoData, len(video))
	if v, _ := videoData["video"].(map[string]any); v == nil || v["video_type"] == nil {
		t.Errorf("video STATUS without video.video_type: %v", videoData)
	}
	if key, _ := videoData["media_key"].(string); key != "7_"+res.VideoID {
		t.Errorf("video media_key %q, want 7_%s", key, res.VideoID)
	}
	imageData := s.waitMedia(tok, s.baseURL, res.ImageID, 10*time.Second)
	wantSucceeded(t, imageData, len(image))
	if img, _ := imageData["image"].(map[string]any); img == nil || img["w"] != float64(320) || img["h"] != float64(200) || img["image_type"] != "image/png" {
		t.Errorf("image STATUS %v, want image {w: 320, h: 200, image_type: image/png}", imageData["image"])
	}
	if key, _ := imageData["media_key"].(string); key != "3_"+res.ImageID {
		t.Errorf("image media_key %q, want 3_%s", key, res.ImageID)
	}

	for _, p := range []struct {
		label, text, media, id, gotText string
	}{
		{"video", "a video from twitter-api-v2", res.VideoID, res.VideoTweet.Data.ID, res.VideoTweet.Data.Text},
		{"image", "an image from twitter-api-v2", res.ImageID, res.ImageTweet.Data.ID, res.ImageTweet.Data.Text},
	} {
		if p.gotText != p.text {
			t.Errorf("%s tweet answered text %q, want %q", p.label, p.gotText, p.text)
		}
		postID, ok := validation.ParseID(p.id)
		if !ok {
			t.Fatalf("%s tweet id %q", p.label, p.id)
		}
		s.wantPostMedia(postID, p.media)
	}
	if u := res.UnknownMedia; u.Code != 400 || !strings.Contains(mustJSON(u.Data), "media.media_ids") {
		t.Errorf("tweet with an unknown media id through the library: %+v, want ApiResponseError 400 naming media.media_ids", u)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
