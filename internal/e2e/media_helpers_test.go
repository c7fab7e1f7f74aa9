package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// Helpers of the chunked media upload tests (docs/media-upload.md): the four
// endpoints signed with OAuth 1.0a user context against any API replica of
// a stack, media generated with ffmpeg, and Problem JSON checks.

// demoToken is the bootstrap user's OAuth 1.0a access token.
func (s *stack) demoToken() userToken {
	return userToken{s.creds.AccessToken, s.creds.AccessTokenSecret}
}

// sendSigned signs req as tok (against the stack's public base URL, which
// every replica verifies with) and sends it.
func (s *stack) sendSigned(tok userToken, req *http.Request) response {
	s.t.Helper()
	if err := auth.SignRequest(req, s.baseURL, s.creds.ConsumerKey, s.creds.ConsumerSecret, tok.token, tok.secret, time.Now(), ""); err != nil {
		s.t.Fatalf("sign %s %s: %v", req.Method, req.URL, err)
	}
	return s.send(req)
}

// signedAt sends a request with an optional body of contentType to base
// (the stack's or a replica's base URL).
func (s *stack) signedAt(tok userToken, base, method, path string, body []byte, contentType string) response {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		s.t.Fatalf("build %s %s: %v", method, path, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return s.sendSigned(tok, req)
}

// trySigned is signedAt for goroutines: failures are returned.
func (s *stack) trySigned(tok userToken, base, method, path string, body []byte, contentType string) (int, []byte, error) {
	req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", contentType)
	if err := auth.SignRequest(req, s.baseURL, s.creds.ConsumerKey, s.creds.ConsumerSecret, tok.token, tok.secret, time.Now(), ""); err != nil {
		return 0, nil, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

func (s *stack) signedJSONAt(tok userToken, base, method, path string, body any) response {
	s.t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		s.t.Fatalf("encode body: %v", err)
	}
	return s.signedAt(tok, base, method, path, raw, "application/json")
}

// initMedia sends POST /2/media/upload/initialize with body.
func (s *stack) initMedia(tok userToken, body map[string]any) response {
	s.t.Helper()
	return s.signedJSONAt(tok, s.baseURL, http.MethodPost, "/2/media/upload/initialize", body)
}

// mustInitMedia initializes an upload and checks the answer's shape; it
// returns the media id.
func (s *stack) mustInitMedia(tok userToken, body map[string]any) string {
	s.t.Helper()
	resp := s.initMedia(tok, body)
	if resp.Status != http.StatusOK {
		s.t.Fatalf("initialize %v: %d %s", body, resp.Status, resp.Raw)
	}
	data, _ := resp.Body["data"].(map[string]any)
	id, _ := data["id"].(string)
	if _, ok := validation.ParseID(id); !ok {
		s.t.Fatalf("initialize: id %v is not a core id: %s", data["id"], resp.Raw)
	}
	if key, _ := data["media_key"].(string); !strings.HasSuffix(key, "_"+id) {
		s.t.Fatalf("initialize: media_key %v does not end in _%s", data["media_key"], id)
	}
	if secs, _ := data["expires_after_secs"].(float64); secs <= 0 || secs > 86400 {
		s.t.Fatalf("initialize: expires_after_secs %v, want 1..86400", data["expires_after_secs"])
	}
	return id
}

// appendEncoding is how a segment is sent to append.
type appendEncoding int

const (
	multipartMediaFirst appendEncoding = iota // media part, then segment_index
	multipartMediaLast                        // segment_index, then media part
	jsonBase64                                // {"media": "<base64>", "segment_index": n}
)

func (e appendEncoding) String() string {
	return [...]string{"multipart (media first)", "multipart (media last)", "JSON base64"}[e]
}

// appendBody renders one append request body and its content type.
func appendBody(enc appendEncoding, index int, data []byte) ([]byte, string) {
	if enc == jsonBase64 {
		raw, _ := json.Marshal(map[string]any{"media": base64.StdEncoding.EncodeToString(data), "segment_index": index})
		return raw, "application/json"
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	field := func() { _ = mw.WriteField("segment_index", strconv.Itoa(index)) }
	if enc == multipartMediaLast {
		field()
	}
	part, _ := mw.CreateFormFile("media", "blob")
	_, _ = part.Write(data)
	if enc == multipartMediaFirst {
		field()
	}
	_ = mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}

// appendMedia sends one segment to base with enc.
func (s *stack) appendMedia(tok userToken, base, id string, index int, data []byte, enc appendEncoding) response {
	s.t.Helper()
	body, ct := appendBody(enc, index, data)
	return s.signedAt(tok, base, http.MethodPost, "/2/media/upload/"+id+"/append", body, ct)
}

func (s *stack) mustAppend(tok userToken, base, id string, index int, data []byte, enc appendEncoding) {
	s.t.Helper()
	resp := s.appendMedia(tok, base, id, index, data, enc)
	if resp.Status != http.StatusOK {
		s.t.Fatalf("append segment %d (%d bytes, %s) to %s: %d %s", index, len(data), enc, base, resp.Status, resp.Raw)
	}
	data2, _ := resp.Body["data"].(map[string]any)
	if at, _ := data2["expires_at"].(float64); at < float64(time.Now().Unix()) {
		s.t.Fatalf("append segment %d: expires_at %v is not in the future: %s", index, data2["expires_at"], resp.Raw)
	}
}

// finalizeMedia sends finalize with no body to base.
func (s *stack) finalizeMedia(tok userToken, base, id string) response {
	s.t.Helper()
	return s.signedAt(tok, base, http.MethodPost, "/2/media/upload/"+id+"/finalize", nil, "")
}

// mediaStatus sends GET /2/media/upload?command=STATUS&media_id=id to base.
func (s *stack) mediaStatus(tok userToken, base, id string) response {
	s.t.Helper()
	return s.signedAt(tok, base, http.MethodGet, "/2/media/upload?command=STATUS&media_id="+id, nil, "")
}

// uploadMedia runs initialize, appends in segments of segment bytes
// (multipart, media last), finalize; it returns the media id.
func (s *stack) uploadMedia(tok userToken, data []byte, segment int, init map[string]any) string {
	s.t.Helper()
	init["total_bytes"] = len(data)
	id := s.mustInitMedia(tok, init)
	for i := 0; i*segment < len(data); i++ {
		s.mustAppend(tok, s.baseURL, id, i, data[i*segment:min((i+1)*segment, len(data))], multipartMediaLast)
	}
	if resp := s.finalizeMedia(tok, s.baseURL, id); resp.Status != http.StatusOK {
		s.t.Fatalf("finalize %s: %d %s", id, resp.Status, resp.Raw)
	}
	return id
}

// processingInfo returns STATUS's data and processing_info.
func processingInfo(t testing.TB, resp response) (data, info map[string]any) {
	t.Helper()
	if resp.Status != http.StatusOK {
		t.Fatalf("STATUS: %d %s", resp.Status, resp.Raw)
	}
	data, _ = resp.Body["data"].(map[string]any)
	info, _ = data["processing_info"].(map[string]any)
	if info == nil {
		t.Fatalf("STATUS without processing_info: %s", resp.Raw)
	}
	return data, info
}

// waitMedia polls STATUS on base until the media reaches a final state
// (honouring check_after_secs, as clients do) and returns STATUS's data.
func (s *stack) waitMedia(tok userToken, base, id string, timeout time.Duration) map[string]any {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		data, info := processingInfo(s.t, s.mediaStatus(tok, base, id))
		switch info["state"] {
		case string(storage.MediaSucceeded), string(storage.MediaFailed):
			return data
		case string(storage.MediaPending), string(storage.MediaInProgress):
		default:
			s.t.Fatalf("STATUS of %s: unknown state %v", id, info["state"])
		}
		if secs, _ := info["check_after_secs"].(float64); secs < 1 {
			s.t.Fatalf("STATUS of %s: %v without check_after_secs >= 1: %v", id, info["state"], info)
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("media %s still %v after %s", id, info["state"], timeout)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// wantSucceeded checks STATUS data of processed media.
func wantSucceeded(t testing.TB, data map[string]any, size int) {
	t.Helper()
	info, _ := data["processing_info"].(map[string]any)
	if info["state"] != string(storage.MediaSucceeded) {
		t.Fatalf("media %v ended %v: %v", data["id"], info["state"], info)
	}
	if info["progress_percent"] != float64(100) {
		t.Errorf("succeeded media %v: progress_percent %v, want 100", data["id"], info["progress_percent"])
	}
	if data["size"] != float64(size) {
		t.Errorf("media %v: size %v, want %d", data["id"], data["size"], size)
	}
}

// tweetWithMedia sends POST /2/tweets with media.media_ids as tok.
func (s *stack) tweetWithMedia(tok userToken, text string, ids ...string) response {
	s.t.Helper()
	return s.signedJSONAt(tok, s.baseURL, http.MethodPost, "/2/tweets", map[string]any{"text": text, "media": map[string]any{"media_ids": ids}})
}

// mustTweetWithMedia posts and checks, in the database, that the post
// carries exactly ids.
func (s *stack) mustTweetWithMedia(tok userToken, text string, ids ...string) int64 {
	s.t.Helper()
	resp := s.tweetWithMedia(tok, text, ids...)
	if resp.Status != http.StatusCreated {
		s.t.Fatalf("POST /2/tweets with media %v: %d %s", ids, resp.Status, resp.Raw)
	}
	data, _ := resp.Body["data"].(map[string]any)
	idStr, _ := data["id"].(string)
	postID, ok := validation.ParseID(idStr)
	if !ok || data["text"] != text {
		s.t.Fatalf("POST /2/tweets answer %s", resp.Raw)
	}
	s.wantPostMedia(postID, ids...)
	return postID
}

// wantPostMedia checks the stored media ids of a post.
func (s *stack) wantPostMedia(postID int64, ids ...string) {
	s.t.Helper()
	p := s.mustPost(postID)
	got := make([]string, len(p.MediaIDs))
	for i, id := range p.MediaIDs {
		got[i] = strconv.FormatInt(id, 10)
	}
	if strings.Join(got, ",") != strings.Join(ids, ",") {
		s.t.Fatalf("post %d stores media %v, want %v", postID, got, ids)
	}
}

// mediaRecord loads a media row (assertions only).
func (s *stack) mediaRecord(id string) storage.Media {
	s.t.Helper()
	n, ok := validation.ParseID(id)
	if !ok {
		s.t.Fatalf("media id %q", id)
	}
	m, err := s.db.Media(context.Background(), n)
	if err != nil {
		s.t.Fatalf("load media %s: %v", id, err)
	}
	return m
}

// userID is the id of username as a string.
func (s *stack) userID(username string) string {
	s.t.Helper()
	u, err := s.db.UserByUsername(context.Background(), username)
	if err != nil {
		s.t.Fatalf("load user %s: %v", username, err)
	}
	return strconv.FormatInt(u.ID, 10)
}

// wantMediaProblem checks a Problem JSON answer: status, a type URI (of
// slug unless it is ""), a title, the numeric status, a detail, and that the document
// mentions each of mentions (a parameter name, a number).
func wantMediaProblem(t testing.TB, what string, r response, status int, slug string, mentions ...string) {
	t.Helper()
	if r.Status != status {
		t.Errorf("%s: %d %s, want %d", what, r.Status, r.Raw, status)
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Errorf("%s: Content-Type %q, want application/problem+json", what, ct)
	}
	typ, _ := r.Body["type"].(string)
	title, _ := r.Body["title"].(string)
	detail, _ := r.Body["detail"].(string)
	if typ == "" || (slug != "" && !strings.HasSuffix(typ, "/problems/"+slug)) || title == "" || detail == "" || r.Body["status"] != float64(status) {
		t.Errorf("%s: problem %s, want a type (.../problems/%s), a title, status %d and a detail", what, r.Raw, slug, status)
	}
	for _, m := range mentions {
		if !bytes.Contains(r.Raw, []byte(m)) {
			t.Errorf("%s: problem %s does not mention %q", what, r.Raw, m)
		}
	}
}

// ffmpeg renders a file with ffmpeg (lavfi sources) into dir and returns
// its bytes.
func ffmpeg(t testing.TB, dir, name string, args ...string) []byte {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Fatalf("ffmpeg is required by the media tests (and by the media worker): %v", err)
	}
	out := filepath.Join(dir, name)
	cmd := exec.Command("ffmpeg", append(append([]string{"-nostdin", "-v", "error", "-y"}, args...), out)...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// noisyVideo is an MP4 (H.264 lossless 4:4:4 of a test pattern with
// noise, plus a sine AAC track) of secs seconds at 160x120, 15 fps:
// about 0.7 MB a second, so a few seconds make several 1 MB chunks.
func noisyVideo(t testing.TB, dir string, secs int) []byte {
	t.Helper()
	return ffmpeg(t, dir, fmt.Sprintf("noisy-%ds.mp4", secs),
		"-f", "lavfi", "-i", "testsrc=size=160x120:rate=15,noise=alls=100:allf=t+u",
		"-f", "lavfi", "-i", "sine", "-t", strconv.Itoa(secs),
		"-c:v", "libx264", "-preset", "ultrafast", "-qp", "0", "-pix_fmt", "yuv444p", "-c:a", "aac", "-shortest")
}

// noisyPNG encodes w x h random pixels as PNG (it compresses badly: about
// 4 bytes a pixel).
func noisyPNG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(uint64(w), uint64(h)))
	for i := range img.Pix {
		img.Pix[i] = uint8(rng.Uint32())
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// pngImage encodes a w x h gradient as PNG.
func pngImage(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{uint8(x * 255 / w), uint8(y * 255 / h), uint8((x + y) % 256), 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
