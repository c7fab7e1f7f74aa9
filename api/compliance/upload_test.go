package compliance_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/storage/blob"
	"github.com/aviary-dev/aviary/validation"
)

// uploadReply is the answer to a PUT of an upload URL.
type uploadReply struct {
	status int
	header http.Header
	raw    string
}

// put sends body to rawURL with no Authorization, chunked when size < 0.
func put(t *testing.T, rawURL string, body io.Reader, size int64, authz string) uploadReply {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, rawURL, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = size
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("PUT %s: %v", rawURL, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return uploadReply{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
}

func (u uploadReply) want(t *testing.T, status int, detail string) {
	t.Helper()
	if u.status != status {
		t.Fatalf("status %d %s, want %d", u.status, u.raw, status)
	}
	if status != http.StatusOK && !strings.Contains(u.raw, detail) {
		t.Errorf("body %s, want it to mention %q", u.raw, detail)
	}
}

// bundle is the API under test (apitest.Bundle) with the compliance upload tests'
// helpers.
type bundle struct{ *apitest.Bundle }

// setup starts a bundle as apitest.Setup does.
func setup(t testing.TB, rateScale float64, opts ...func(*api.Deps)) *bundle {
	t.Helper()
	return &bundle{apitest.Setup(t, rateScale, opts...)}
}

// newUploadJob creates a job as the first app and returns its id and
// upload URL.
func (b *bundle) newUploadJob(t *testing.T, typ string) (string, string) {
	t.Helper()
	r := b.Call(t, "POST", "/2/compliance/jobs", b.Bearer, "application/json", apitest.JSONBody(map[string]any{"type": typ}))
	if r.Status != http.StatusOK {
		t.Fatalf("create job: %d %s", r.Status, r.Raw)
	}
	data := r.Body["data"].(map[string]any)
	return data["id"].(string), data["upload_url"].(string)
}

func (b *bundle) uploadedBytes(t *testing.T, id string) (int64, bool) {
	t.Helper()
	n, _ := validation.ParseID(id)
	j, err := b.DB.ComplianceJob(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	return j.UploadBytes, j.UploadedAt != nil
}

// TestComplianceUploadGateway drives the upload URL the API serves itself:
// a signed PUT without Authorization stores the file once, and the URL
// refuses a second upload, a forged or borrowed signature, unknown query
// parameters and other methods.
func TestComplianceUploadGateway(t *testing.T) {
	b := setup(t, 1)
	id, uploadURL := b.newUploadJob(t, "tweets")
	if want := b.Srv.URL + "/2/compliance/jobs/" + id + "/upload?"; !strings.HasPrefix(uploadURL, want) {
		t.Fatalf("upload_url %s, want it under %s", uploadURL, want)
	}
	otherID, otherURL := b.newUploadJob(t, "users")
	u, _ := url.Parse(uploadURL)
	q := u.Query()
	forged := func(name, value string) string {
		c := *u
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Set(name, value)
		c.RawQuery = v.Encode()
		return c.String()
	}
	borrowed := strings.Replace(otherURL, "/jobs/"+otherID+"/", "/jobs/"+id+"/", 1)

	put(t, strings.Split(uploadURL, "?")[0], strings.NewReader("1\n"), 2, "").want(t, http.StatusForbidden, "signature")
	put(t, forged(blob.ParamSignature, strings.Repeat("0", 64)), strings.NewReader("1\n"), 2, "").want(t, http.StatusForbidden, "signature")
	put(t, forged(blob.ParamExpires, "9999999999"), strings.NewReader("1\n"), 2, "").want(t, http.StatusForbidden, "signature")
	put(t, forged(blob.ParamMethod, "GET"), strings.NewReader("1\n"), 2, "").want(t, http.StatusForbidden, "method")
	put(t, borrowed, strings.NewReader("1\n"), 2, "").want(t, http.StatusForbidden, "signature")
	put(t, uploadURL+"&extra=1", strings.NewReader("1\n"), 2, "").want(t, http.StatusBadRequest, "extra")
	if r := b.Call(t, "GET", strings.TrimPrefix(uploadURL, b.Srv.URL), "", "", nil); r.Status != http.StatusMethodNotAllowed {
		t.Errorf("GET of the upload URL: %d, want 405", r.Status)
	}
	if _, up := b.uploadedBytes(t, id); up {
		t.Fatal("a refused PUT recorded an upload")
	}

	// Authorization is not needed, and one that is sent is ignored.
	put(t, uploadURL, strings.NewReader("12\n34\n"), 6, "Bearer not-a-token").want(t, http.StatusOK, "")
	if n, up := b.uploadedBytes(t, id); !up || n != 6 {
		t.Fatalf("after the upload: uploaded %v, %d bytes; want true, 6", up, n)
	}
	put(t, uploadURL, strings.NewReader("56\n"), -1, "").want(t, http.StatusConflict, "already complete")
	put(t, otherURL, strings.NewReader("1\n"), -1, "").want(t, http.StatusOK, "")
}

// TestComplianceUploadExpired: an upload URL past its expiry is refused.
func TestComplianceUploadExpired(t *testing.T) {
	b := setup(t, 1)
	b.API.Modules.Compliance.Clock = func() time.Time { return time.Now().Add(-time.Hour) } // created an hour ago
	_, uploadURL := b.newUploadJob(t, "tweets")
	b.API.Modules.Compliance.Clock = time.Now
	put(t, uploadURL, strings.NewReader("1\n"), 2, "").want(t, http.StatusForbidden, "expired")
}

// TestComplianceUploadConcurrent: a second PUT while the first streams gets
// 409, the first one wins and its bytes are the stored ones.
func TestComplianceUploadConcurrent(t *testing.T) {
	b := setup(t, 1)
	id, uploadURL := b.newUploadJob(t, "tweets")
	pr, pw := io.Pipe()
	first := make(chan uploadReply, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPut, uploadURL, pr)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			first <- uploadReply{raw: err.Error()}
			return
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		first <- uploadReply{status: resp.StatusCode, raw: string(raw)}
	}()
	if _, err := pw.Write([]byte("111\n")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for { // the first PUT holds the claim once it streams
		n, _ := validation.ParseID(id)
		j, err := b.DB.ComplianceJob(context.Background(), n)
		if err != nil {
			t.Fatal(err)
		}
		if j.UploadLeaseUntil != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first PUT never claimed the upload")
		}
		time.Sleep(10 * time.Millisecond)
	}
	put(t, uploadURL, strings.NewReader("999\n"), 4, "").want(t, http.StatusConflict, "already in progress")
	if _, err := pw.Write([]byte("222\n")); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	(<-first).want(t, http.StatusOK, "")
	if n, up := b.uploadedBytes(t, id); !up || n != 8 {
		t.Fatalf("uploaded %v, %d bytes; want the first PUT's 8", up, n)
	}
}

// TestComplianceUploadCap: a body over the cap is refused with 413 whether
// its length is declared or not, and leaves the job free for a retry.
func TestComplianceUploadCap(t *testing.T) {
	b := setup(t, 1, func(d *api.Deps) { d.Modules.Compliance.MaxUpload = 10 })
	id, uploadURL := b.newUploadJob(t, "tweets")
	big := strings.Repeat("1\n", 6)
	put(t, uploadURL, strings.NewReader(big), int64(len(big)), "").want(t, http.StatusRequestEntityTooLarge, "10 bytes")
	put(t, uploadURL, io.MultiReader(strings.NewReader(big)), -1, "").want(t, http.StatusRequestEntityTooLarge, "10 bytes")
	if _, up := b.uploadedBytes(t, id); up {
		t.Fatal("a refused upload was recorded")
	}
	put(t, uploadURL, strings.NewReader("1\n2\n"), -1, "").want(t, http.StatusOK, "")
}

// TestComplianceUploadRateLimitPerJob: the upload endpoint is limited per
// job, not per caller (it has none).
func TestComplianceUploadRateLimitPerJob(t *testing.T) {
	b := setup(t, 0.04) // 30 uploads per job and window -> 1
	_, a := b.newUploadJob(t, "tweets")
	_, c := b.newUploadJob(t, "users")
	// Forged requests for a job (its id is no secret) are refused before
	// the limit: they cost the job none of its quota.
	for range 3 {
		put(t, strings.Split(a, "?")[0], strings.NewReader("1\n"), 2, "").want(t, http.StatusForbidden, "signature")
	}
	put(t, a, strings.NewReader("1\n"), 2, "").want(t, http.StatusOK, "")
	put(t, a, strings.NewReader("1\n"), 2, "").want(t, http.StatusTooManyRequests, "Too Many Requests")
	put(t, c, strings.NewReader("1\n"), 2, "").want(t, http.StatusOK, "")
}
