package e2e

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	twitter "github.com/g8rswimmer/go-twitter/v2"

	"github.com/aviary-dev/aviary/api/auth"
)

// bearerAuth is go-twitter's usual app-only authorizer.
type bearerAuth struct{ token string }

func (a bearerAuth) Add(req *http.Request) { req.Header.Add("Authorization", "Bearer "+a.token) }

// bearerTransport sets an app-only bearer token on every request, the way
// golang.org/x/oauth2's transport does. go-twitter v2.1.5 forgets its
// Authorizer on its compliance calls, so its users authorize them in the
// http.Client (the Authorizer then adds nothing). That client also sends the
// token with the job's Upload and Download: Aviary's upload URL and the
// local driver's download URL ignore it; a presigned S3 URL refuses a
// request carrying both (400), so this test runs on the local driver.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(req)
}

// noAuth is the Authorizer of a client whose transport authorizes.
type noAuth struct{}

func (noAuth) Add(*http.Request) {}

// oauth1Auth signs go-twitter's requests with OAuth 1.0a user context, as
// the library's users plug in an OAuth 1.0a signer.
type oauth1Auth struct {
	t       *testing.T
	s       *stack
	token   userToken
	baseURL string
}

func (a oauth1Auth) Add(req *http.Request) {
	c := a.s.creds
	if err := auth.SignRequest(req, a.baseURL, c.ConsumerKey, c.ConsumerSecret, a.token.token, a.token.secret, time.Now(), ""); err != nil {
		a.t.Errorf("sign %s %s: %v", req.Method, req.URL, err)
	}
}

// TestGoTwitterClient drives the posts and compliance endpoints with the
// widely used Go client github.com/g8rswimmer/go-twitter/v2, pointed at
// Aviary's base URL and nothing else changed: create and delete posts,
// create a compliance job, upload through its upload_url, poll it, list it
// and download the result, plus the errors the library must surface.
func TestGoTwitterClient(t *testing.T) {
	s := newStack(t, stackOptions{driver: "local", workers: 1})
	ctx := t.Context()
	httpClient := &http.Client{Timeout: 30 * time.Second}
	app := &twitter.Client{Authorizer: noAuth{}, Host: s.baseURL,
		Client: &http.Client{Timeout: 30 * time.Second, Transport: bearerTransport{s.creds.BearerToken}}}
	user := &twitter.Client{Authorizer: oauth1Auth{t: t, s: s, baseURL: s.baseURL,
		token: userToken{s.creds.AccessToken, s.creds.AccessTokenSecret}}, Client: httpClient, Host: s.baseURL}

	kept := createPost(t, user, "kept by go-twitter")
	gone := createPost(t, user, "deleted by go-twitter")
	del, err := user.DeleteTweet(ctx, gone)
	if err != nil || del.Tweet == nil || !del.Tweet.Deleted {
		t.Fatalf("DeleteTweet = %+v, %v", del, err)
	}
	_, err = user.CreateTweet(ctx, twitter.CreateTweetRequest{Text: strings.Repeat("a", 281)})
	wantStatus(t, "CreateTweet over 280 characters", err, http.StatusBadRequest)
	bearer := &twitter.Client{Authorizer: bearerAuth{s.creds.BearerToken}, Client: httpClient, Host: s.baseURL}
	_, err = bearer.CreateTweet(ctx, twitter.CreateTweetRequest{Text: "app-only"})
	wantStatus(t, "CreateTweet with a bearer token", err, http.StatusForbidden)

	created, err := app.CreateComplianceBatchJob(ctx, twitter.ComplianceBatchJobTypeTweets, twitter.CreateComplianceBatchJobOpts{Name: "go-twitter"})
	if err != nil || created.Raw == nil || created.Raw.Job == nil {
		t.Fatalf("CreateComplianceBatchJob = %+v, %v", created, err)
	}
	job := created.Raw.Job
	if job.Status != twitter.ComplianceBatchJobStatusCreated || job.Name != "go-twitter" || job.UploadURL == "" || job.DownloadURL == "" {
		t.Fatalf("created job = %+v", job)
	}
	if err := job.Upload(ctx, strings.NewReader(kept+"\n"+gone+"\n")); err != nil {
		t.Fatalf("Upload: %v", err)
	}
	err = job.Upload(ctx, strings.NewReader(kept+"\n"))
	wantStatus(t, "a second Upload", err, http.StatusConflict)

	done := waitClientJob(t, app, job.ID)
	if done.Status != twitter.ComplianceBatchJobStatusComplete {
		t.Fatalf("job ended %s: %+v", done.Status, done)
	}
	results, err := done.Download(ctx)
	if err != nil {
		t.Fatalf("Download: %v", err)
	}
	if len(results.Results) != 1 || results.Results[0].ID != gone || results.Results[0].Action != "delete" ||
		results.Results[0].Reason != "deleted" || results.Results[0].RedactedAt == "" {
		t.Errorf("results = %+v, want one delete of %s", results.Results, gone)
	}

	listed, err := app.ComplianceBatchJobLookup(ctx, twitter.ComplianceBatchJobTypeTweets, twitter.ComplianceBatchJobLookupOpts{})
	if err != nil || listed.Raw == nil || !slices.ContainsFunc(listed.Raw.Jobs, func(j *twitter.ComplianceBatchJobObj) bool { return j.ID == job.ID }) {
		t.Errorf("ComplianceBatchJobLookup = %+v, %v; want it to list %s", listed, err, job.ID)
	}
	_, err = app.ComplianceBatchJob(ctx, "99999")
	wantStatus(t, "ComplianceBatchJob of an unknown id", err, http.StatusNotFound)
}

func createPost(t *testing.T, c *twitter.Client, text string) string {
	t.Helper()
	resp, err := c.CreateTweet(t.Context(), twitter.CreateTweetRequest{Text: text})
	if err != nil || resp.Tweet == nil || resp.Tweet.ID == "" || resp.Tweet.Text != text {
		t.Fatalf("CreateTweet(%q) = %+v, %v", text, resp, err)
	}
	return resp.Tweet.ID
}

// wantStatus checks that the library surfaced the API's error with status.
func wantStatus(t *testing.T, what string, err error, status int) {
	t.Helper()
	var apiErr *twitter.ErrorResponse
	if !errors.As(err, &apiErr) || apiErr.StatusCode != status || apiErr.Title == "" {
		t.Errorf("%s: %v (%#v), want the library's ErrorResponse with status %d and a title", what, err, apiErr, status)
	}
}

// waitClientJob polls the job through the library like a client would.
func waitClientJob(t *testing.T, c *twitter.Client, id string) *twitter.ComplianceBatchJobObj {
	t.Helper()
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		resp, err := c.ComplianceBatchJob(t.Context(), id)
		if err != nil || resp.Raw == nil || resp.Raw.Job == nil {
			t.Fatalf("ComplianceBatchJob(%s) = %+v, %v", id, resp, err)
		}
		if st := resp.Raw.Job.Status; st == twitter.ComplianceBatchJobStatusComplete || st == twitter.ComplianceBatchJobStatusFailed {
			return resp.Raw.Job
		}
	}
	t.Fatalf("job %s did not finish in 90 s", id)
	return nil
}
