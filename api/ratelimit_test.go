package api_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/storage"
)

// TestPerUserLimitIsPerApp exhausts the per-user limit of POST /2/tweets
// (scaled to 1) for a user through one app: the 429 says when to retry, the
// same user through another app has a window of its own, and another user
// of the first app too.
func TestPerUserLimitIsPerApp(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 1.0/200)
	viaOther, err := b.DB.EnsureAccessToken(context.Background(), b.Other.ID, b.Author.ID, storage.AccessReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	post := func(app storage.App, tok storage.AccessToken) (int, http.Header) {
		req, _ := http.NewRequest("POST", b.Srv.URL+"/2/tweets", bytes.NewReader(apitest.JSONBody(map[string]any{"text": "hi"})))
		req.Header.Set("Content-Type", "application/json")
		if err := auth.SignRequest(req, "", app.ConsumerKey, app.ConsumerSecret, tok.Token, tok.Secret, time.Now(), ""); err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, resp.Header
	}
	if status, _ := post(b.App, b.AuthorToken); status != http.StatusCreated {
		t.Fatalf("first post: %d", status)
	}
	status, h := post(b.App, b.AuthorToken)
	if status != http.StatusTooManyRequests {
		t.Fatalf("second post: %d, want 429", status)
	}
	reset, _ := strconv.ParseInt(h.Get("x-rate-limit-reset"), 10, 64)
	retry, err := strconv.ParseInt(h.Get("Retry-After"), 10, 64)
	if err != nil || retry < 1 || retry > 900 || retry > reset-time.Now().Unix()+1 {
		t.Errorf("Retry-After %q with reset %d; want the seconds until the reset", h.Get("Retry-After"), reset)
	}
	if status, _ := post(b.Other, viaOther); status != http.StatusCreated {
		t.Errorf("same user through another app: %d, want 201", status)
	}
	if status, _ := post(b.App, b.Token); status != http.StatusCreated {
		t.Errorf("another user of the first app: %d, want 201", status)
	}
}
