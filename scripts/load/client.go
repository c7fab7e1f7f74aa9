package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/aviary-dev/aviary/api/auth"
)

// client builds the load's requests: app-only (bearer) or user context
// (OAuth 1.0a signed at the moment a target is made, so every nonce is
// fresh), and performs the few setup calls outside the attack.
type client struct {
	base    string
	creds   creds
	bearers []string // the demo app's first
	http    *http.Client
}

func newClient(s *stack) *client {
	bearers := s.bearers
	if len(bearers) == 0 {
		bearers = []string{s.creds.BearerToken}
	}
	return &client{base: s.baseURL, creds: s.creds, bearers: bearers, http: &http.Client{Timeout: 60 * time.Second}}
}

// bearer is an app-only target of the demo app.
func (c *client) bearer(method, url string, body []byte, ctype string) vegeta.Target {
	return c.bearerOf(c.bearers[0], method, url, body, ctype)
}

// bearerOf is an app-only target with the given token.
func (c *client) bearerOf(token, method, url string, body []byte, ctype string) vegeta.Target {
	h := http.Header{"Authorization": {"Bearer " + token}}
	if ctype != "" {
		h.Set("Content-Type", ctype)
	}
	return vegeta.Target{Method: method, URL: url, Body: body, Header: h}
}

// user is a target signed with the demo user's OAuth 1.0a access token.
func (c *client) user(method, url string, body []byte, ctype string) (vegeta.Target, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return vegeta.Target{}, fmt.Errorf("build %s %s: %w", method, url, err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	cr := c.creds
	if err := auth.SignRequest(req, c.base, cr.ConsumerKey, cr.ConsumerSecret, cr.AccessToken, cr.AccessTokenSecret, time.Now(), ""); err != nil {
		return vegeta.Target{}, fmt.Errorf("sign %s %s: %w", method, url, err)
	}
	return vegeta.Target{Method: method, URL: url, Body: body, Header: req.Header}, nil
}

// do performs one target outside the attack and decodes its JSON answer.
// A 503 (a dependency unavailable: on a loaded machine, PostgreSQL's
// answer not in time) or a transport error (the server answered early and
// closed) is tried again, up to 5 times a second apart: these are the
// setup's and the backlogs' calls, not the measured ones, and their
// callers allow for a first try that went through.
func (c *client) do(ctx context.Context, t vegeta.Target, want int, out any) error {
	return c.doMade(ctx, func() (vegeta.Target, error) { return t, nil }, want, out)
}

// doUser is do of a request signed as the demo user, signed afresh for
// every try (a nonce is good once).
func (c *client) doUser(ctx context.Context, method, url string, body []byte, ctype string, want int, out any) error {
	return c.doMade(ctx, func() (vegeta.Target, error) { return c.user(method, url, body, ctype) }, want, out)
}

func (c *client) doMade(ctx context.Context, made func() (vegeta.Target, error), want int, out any) error {
	var resp *http.Response
	var b []byte
	var t vegeta.Target
	for attempt := 1; ; attempt++ {
		var err error
		if t, err = made(); err != nil {
			return err
		}
		req, err := t.Request()
		if err != nil {
			return err
		}
		resp, err = c.http.Do(req.WithContext(ctx))
		if err != nil && (attempt == 5 || ctx.Err() != nil) {
			return fmt.Errorf("%s %s: %w", t.Method, t.URL, err)
		}
		if err == nil {
			b, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusServiceUnavailable || attempt == 5 {
				break
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %d %s", t.Method, t.URL, resp.StatusCode, b)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: decode: %w", t.Method, t.URL, err)
	}
	return nil
}

// createPost posts text as the demo user and returns the new post's id.
func (c *client) createPost(ctx context.Context, text string) (string, error) {
	body, _ := json.Marshal(map[string]string{"text": text})
	var out struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := c.doUser(ctx, http.MethodPost, c.base+"/2/tweets", body, "application/json", http.StatusCreated, &out); err != nil {
		return "", err
	}
	return out.Data.ID, nil
}

// doNotReachList creates the ad account's do-not-reach list (one per
// account) and returns its id.
func (c *client) doNotReachList(ctx context.Context) (string, error) {
	var out struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := c.doUser(ctx, http.MethodPost, c.base+"/12/accounts/"+c.creds.AdsAccountID+"/do_not_reach_lists", nil, "", http.StatusOK, &out); err != nil {
		return "", err
	}
	return out.Data.ID, nil
}

// complianceJob creates a tweets compliance job and uploads ids to it; it
// returns the job's id.
func (c *client) complianceJob(ctx context.Context, bearer string, ids []byte) (string, error) {
	var job jobAnswer
	t := c.bearerOf(bearer, http.MethodPost, c.base+"/2/compliance/jobs", []byte(`{"type":"tweets","name":"load"}`), "application/json")
	if err := c.do(ctx, t, http.StatusOK, &job); err != nil {
		return "", err
	}
	up := vegeta.Target{Method: http.MethodPut, URL: job.Data.UploadURL, Body: ids, Header: http.Header{"Content-Type": {"text/plain"}}}
	// An upload answered 503 may have gone through (the retry's 409
	// "already complete") or left its claim until its 60 s lease lapses
	// (docs/compliance-upload-gateway.md; 409 "in progress", waited out).
	deadline := time.Now().Add(3 * time.Minute)
	for {
		err := c.do(ctx, up, http.StatusOK, nil)
		if err == nil || strings.Contains(err.Error(), "already complete") { // a 503 whose upload went through
			return job.Data.ID, nil
		}
		if !strings.Contains(err.Error(), ": 409 ") || !strings.Contains(err.Error(), "in progress") || time.Now().After(deadline) {
			return "", err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

type jobAnswer struct {
	Data struct {
		ID        string `json:"id"`
		UploadURL string `json:"upload_url"`
	} `json:"data"`
}

// ring holds the newest post ids the reads pick from.
type ring struct {
	mu  sync.Mutex
	ids []string
	n   int
}

func newRing(size int) *ring { return &ring{ids: make([]string, 0, size)} }

func (r *ring) add(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ids) < cap(r.ids) {
		r.ids = append(r.ids, id)
	} else {
		r.ids[r.n%len(r.ids)] = id
	}
	r.n++
}

// pick returns the i-th id modulo the ring ("" while empty).
func (r *ring) pick(i uint64) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ids) == 0 {
		return ""
	}
	return r.ids[i%uint64(len(r.ids))]
}

// uploadImage uploads png as the demo user (initialize, one append,
// finalize) and returns the media id; finalize answers without waiting
// for the worker when the API's AVIARY_MEDIA_IMAGE_WAIT is 0.
func (c *client) uploadImage(ctx context.Context, png []byte) (string, error) {
	body := fmt.Appendf(nil, `{"media_type":"image/png","media_category":"tweet_image","total_bytes":%d}`, len(png))
	var out struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := c.doUser(ctx, http.MethodPost, c.base+"/2/media/upload/initialize", body, "application/json", http.StatusOK, &out); err != nil {
		return "", err
	}
	seg := fmt.Appendf(nil, `{"segment_index":0,"media":%q}`, base64.StdEncoding.EncodeToString(png))
	if err := c.doUser(ctx, http.MethodPost, c.base+"/2/media/upload/"+out.Data.ID+"/append", seg, "application/json", http.StatusOK, nil); err != nil {
		return "", err
	}
	if err := c.doUser(ctx, http.MethodPost, c.base+"/2/media/upload/"+out.Data.ID+"/finalize", nil, "", http.StatusOK, nil); err != nil {
		return "", err
	}
	return out.Data.ID, nil
}
