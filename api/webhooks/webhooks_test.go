package webhooks_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/api/webhooks"
	"github.com/aviary-dev/aviary/internal/outbound"
	"github.com/aviary-dev/aviary/internal/outbound/outboundtest"
	"github.com/aviary-dev/aviary/storage/postgres"
)

// receiver is a local webhook receiver answering CRC checks by path: /ok
// correctly with secret, /wrong with another secret, /redirect with a 302
// to /ok, /slow after the client gave up, /down with HTTP 503.
type receiver struct {
	*httptest.Server
	crcs atomic.Int64
}

func newReceiver(t *testing.T, secret string, tlsServer bool) *receiver {
	t.Helper()
	rc := &receiver{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.crcs.Add(1)
		token := r.URL.Query().Get("crc_token")
		key := secret
		switch r.URL.Path {
		case "/wrong":
			key = "not the consumer secret"
		case "/redirect":
			http.Redirect(w, r, "/ok?"+r.URL.RawQuery, http.StatusFound)
			return
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		case "/down":
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		mac := hmac.New(sha256.New, []byte(key))
		mac.Write([]byte(token))
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"response_token": "sha256=" + base64.StdEncoding.EncodeToString(mac.Sum(nil))})
	})
	if tlsServer {
		rc.Server = httptest.NewTLSServer(h)
	} else {
		rc.Server = httptest.NewServer(h)
	}
	t.Cleanup(rc.Close)
	return rc
}

// hostPort is the receiver's 127.0.0.1:port.
func (rc *receiver) hostPort() string { return rc.Listener.Addr().String() }

// setup is the API on real backends with a webhooks module whose URL rule
// allows allowURLs and whose guarded client (CRC timeout 1 s) reaches
// allowDial; max caps each app.
func setup(t *testing.T, allowURLs, allowDial string, max int) *apitest.Bundle {
	t.Helper()
	parse := func(s string) outbound.AllowList {
		a, err := outbound.ParseAllowList(s)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	client := outbound.New(outbound.Config{Allow: parse(allowDial), NoRedirects: true, Timeout: time.Second, MaxBytes: 64 << 10})
	return apitest.SetupOn(t, 100, func(db *postgres.DB, d *api.Deps) {
		d.Modules.Webhooks = webhooks.New(webhooks.Deps{Store: db, Client: client, Allow: parse(allowURLs), Max: max})
	})
}

func register(t *testing.T, b *apitest.Bundle, authz, url string) apitest.Reply {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"url": url})
	return b.Call(t, "POST", "/2/webhooks", authz, "application/json", body)
}

// wantFailure checks a 400 naming the platform's failure reason.
func wantFailure(t *testing.T, r apitest.Reply, reason string) {
	t.Helper()
	if r.Status != http.StatusBadRequest || r.Body["reason"] != reason || !strings.Contains(r.Raw, reason+":") {
		t.Fatalf("got %d %s, want 400 with reason %s", r.Status, r.Raw, reason)
	}
}

// TestWebhookLifecycle: a receiver that answers CRC is registered valid,
// listed, re-validated and deleted; another app never sees or touches it.
func TestWebhookLifecycle(t *testing.T) {
	t.Parallel()
	allow := "127.0.0.1:*"
	b := setup(t, allow, allow, 2)
	rc := newReceiver(t, b.App.ConsumerSecret, false)
	url := rc.URL + "/ok"
	r := register(t, b, b.Bearer, url)
	if r.Status != 200 || apitest.Obj(r.Body, "data", "valid") != true || apitest.Obj(r.Body, "data", "url") != url {
		t.Fatalf("register: %d %s", r.Status, r.Raw)
	}
	id := apitest.Obj(r.Body, "data", "id").(string)
	if _, err := time.Parse(time.RFC3339, apitest.Obj(r.Body, "data", "created_at").(string)); err != nil {
		t.Fatalf("created_at: %v", err)
	}
	wantFailure(t, register(t, b, b.Bearer, url), webhooks.ReasonDuplicate)

	list := b.Call(t, "GET", "/2/webhooks?webhook_config.fields=url,valid", b.Bearer, "", nil)
	if list.Status != 200 || apitest.Obj(list.Body, "meta", "result_count") != 1.0 || apitest.Obj(list.Body, "data").([]any)[0].(map[string]any)["id"] != id {
		t.Fatalf("list: %d %s", list.Status, list.Raw)
	}
	other := b.Call(t, "GET", "/2/webhooks", b.OtherBearer, "", nil)
	if other.Status != 200 || other.Raw != `{"data":[],"meta":{"result_count":0}}`+"\n" && apitest.Obj(other.Body, "meta", "result_count") != 0.0 {
		t.Fatalf("other app's list: %d %s", other.Status, other.Raw)
	}
	wantFailure(t, b.Call(t, "PUT", "/2/webhooks/"+id, b.OtherBearer, "", nil), webhooks.ReasonIDInvalid)
	wantFailure(t, b.Call(t, "DELETE", "/2/webhooks/"+id, b.OtherBearer, "", nil), webhooks.ReasonIDInvalid)

	put := b.Call(t, "PUT", "/2/webhooks/"+id, b.Bearer, "", nil)
	if put.Status != 200 || apitest.Obj(put.Body, "data", "valid") != true {
		t.Fatalf("validate: %d %s", put.Status, put.Raw)
	}
	del := b.Call(t, "DELETE", "/2/webhooks/"+id, b.Bearer, "", nil)
	if del.Status != 200 || apitest.Obj(del.Body, "data", "deleted") != true {
		t.Fatalf("delete: %d %s", del.Status, del.Raw)
	}
	wantFailure(t, b.Call(t, "PUT", "/2/webhooks/"+id, b.Bearer, "", nil), webhooks.ReasonIDInvalid)
	wantFailure(t, b.Call(t, "DELETE", "/2/webhooks/"+id, b.Bearer, "", nil), webhooks.ReasonIDInvalid)
	if r := b.Call(t, "DELETE", "/2/webhooks/12ab", b.Bearer, "", nil); r.Status != 400 {
		t.Fatalf("malformed id: %d %s", r.Status, r.Raw)
	}
	// The URL is free again once deleted.
	if r := register(t, b, b.Bearer, url); r.Status != 200 {
		t.Fatalf("register again: %d %s", r.Status, r.Raw)
	}
}

// TestWebhookCap: an app holds at most Max webhooks.
func TestWebhookCap(t *testing.T) {
	t.Parallel()
	allow := "127.0.0.1:*"
	b := setup(t, allow, allow, 1)
	rc := newReceiver(t, b.App.ConsumerSecret, false)
	if r := register(t, b, b.Bearer, rc.URL+"/ok?n=1"); r.Status != 200 {
		t.Fatalf("first: %d %s", r.Status, r.Raw)
	}
	before := rc.crcs.Load()
	wantFailure(t, register(t, b, b.Bearer, rc.URL+"/ok?n=2"), webhooks.ReasonLimit)
	if rc.crcs.Load() != before {
		t.Fatal("a registration over the cap sent a CRC check")
	}
	// The cap is per app.
	other := newReceiver(t, b.Other.ConsumerSecret, false)
	if r := register(t, b, b.OtherBearer, other.URL+"/ok?n=2"); r.Status != 200 {
		t.Fatalf("other app: %d %s", r.Status, r.Raw)
	}
}

// TestWebhookCRCFailures: a wrong token, a redirect, no answer in time,
// an HTTP error and a TLS error fail registration with CrcValidationFailed,
// and no webhook is created.
func TestWebhookCRCFailures(t *testing.T) {
	t.Parallel()
	allow := "127.0.0.1:*"
	b := setup(t, allow, allow, 5)
	rc := newReceiver(t, b.App.ConsumerSecret, false)
	tlsRC := newReceiver(t, b.App.ConsumerSecret, true)
	for _, path := range []string{"/wrong", "/redirect", "/slow", "/down"} {
		t.Run(path, func(t *testing.T) {
			wantFailure(t, register(t, b, b.Bearer, rc.URL+path), webhooks.ReasonCRC)
		})
	}
	t.Run("tls", func(t *testing.T) {
		wantFailure(t, register(t, b, b.Bearer, tlsRC.URL+"/ok"), webhooks.ReasonCRC)
	})
	t.Run("another app's secret", func(t *testing.T) {
		wantFailure(t, register(t, b, b.OtherBearer, rc.URL+"/ok"), webhooks.ReasonCRC)
	})
	if list := b.Call(t, "GET", "/2/webhooks", b.Bearer, "", nil); apitest.Obj(list.Body, "meta", "result_count") != 0.0 {
		t.Fatalf("failed registrations created webhooks: %s", list.Raw)
	}
}

// TestWebhookRevalidate: PUT after the receiver starts answering wrong
// fails with CrcValidationFailed and the webhook is listed invalid; once
// it answers right again, PUT makes it valid.
func TestWebhookRevalidate(t *testing.T) {
	t.Parallel()
	allow := "127.0.0.1:*"
	b := setup(t, allow, allow, 1)
	var wrong atomic.Bool
	secret := b.App.ConsumerSecret
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := secret
		if wrong.Load() {
			key = "wrong"
		}
		mac := hmac.New(sha256.New, []byte(key))
		mac.Write([]byte(r.URL.Query().Get("crc_token")))
		json.NewEncoder(w).Encode(map[string]string{"response_token": "sha256=" + base64.StdEncoding.EncodeToString(mac.Sum(nil))})
	}))
	t.Cleanup(srv.Close)
	r := register(t, b, b.Bearer, srv.URL+"/hook")
	id, _ := apitest.Obj(r.Body, "data", "id").(string)
	wrong.Store(true)
	wantFailure(t, b.Call(t, "PUT", "/2/webhooks/"+id, b.Bearer, "", nil), webhooks.ReasonCRC)
	list := b.Call(t, "GET", "/2/webhooks", b.Bearer, "", nil)
	if apitest.Obj(list.Body, "data").([]any)[0].(map[string]any)["valid"] != false {
		t.Fatalf("after a wrong token: %s", list.Raw)
	}
	wrong.Store(false)
	if put := b.Call(t, "PUT", "/2/webhooks/"+id, b.Bearer, "", nil); apitest.Obj(put.Body, "data", "valid") != true {
		t.Fatalf("revalidate: %d %s", put.Status, put.Raw)
	}
}

// TestWebhookURLRule: without the allow-list only https URLs without a
// port are taken; the allow-list admits its hosts with http and a port.
func TestWebhookURLRule(t *testing.T) {
	t.Parallel()
	b := setup(t, "", "", 5)
	for _, url := range []string{
		"http://example.com/hook", "https://example.com:8443/hook", "ftp://example.com/", "/hook",
		"https://user:pw@example.com/", "https://example.com/#x", "https://example.com/" + strings.Repeat("a", 200), "",
		"http://localhost:3000/webhook",
	} {
		wantFailure(t, register(t, b, b.Bearer, url), webhooks.ReasonURL)
	}
}

// TestWebhookSSRF: URLs that pass the URL rule but lead to loopback,
// private, link-local, metadata or IPv4-mapped addresses (by IP or by a
// name resolving there) fail the CRC, and nothing is fetched: the local
// targets see no connection.
func TestWebhookSSRF(t *testing.T) {
	t.Parallel()
	v4 := outboundtest.Listen(t, "tcp", "127.0.0.1:0")
	v6 := outboundtest.Listen(t, "tcp6", "[::1]:0")
	_, p4, _ := net.SplitHostPort(v4.Addr())
	// The URL rule lets every host and port of these through; the guarded
	// client has no allow-list.
	rule := "127.0.0.1:*,localhost:*,[::ffff:127.0.0.1]:*,10.0.0.1:*,172.16.0.1:*,192.168.1.1:*,169.254.169.254:*,[fd00::1]:*,[fd00:ec2::254]:*,[fe80::1]:*"
	if v6 != nil {
		rule += ",[::1]:*"
	}
	b := setup(t, rule, "", 20)
	urls := []string{
		"http://127.0.0.1:" + p4 + "/hook",
		"http://localhost:" + p4 + "/hook",
		"http://[::ffff:127.0.0.1]:" + p4 + "/hook",
		"http://10.0.0.1/hook", "http://172.16.0.1/hook", "http://192.168.1.1/hook",
		"http://169.254.169.254/latest/meta-data/", "http://[fd00:ec2::254]/", "http://[fd00::1]/hook", "http://[fe80::1]/hook",
	}
	if v6 != nil {
		_, p6, _ := net.SplitHostPort(v6.Addr())
		urls = append(urls, "http://[::1]:"+p6+"/hook")
	}
	for _, url := range urls {
		t.Run(url, func(t *testing.T) {
			start := time.Now()
			wantFailure(t, register(t, b, b.Bearer, url), webhooks.ReasonCRC)
			if d := time.Since(start); d > 900*time.Millisecond {
				t.Errorf("took %s: the guard should refuse before connecting", d)
			}
		})
	}
	if n := v4.Accepted(); n != 0 {
		t.Fatalf("the loopback target accepted %d connections", n)
	}
	if v6 != nil && v6.Accepted() != 0 {
		t.Fatalf("the [::1] target accepted %d connections", v6.Accepted())
	}
}

// TestWebhookRedirectInward: a receiver the guard may reach that redirects
// to loopback fails the CRC; the redirect target sees no connection.
func TestWebhookRedirectInward(t *testing.T) {
	t.Parallel()
	target := outboundtest.Listen(t, "tcp", "127.0.0.1:0")
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+target.Addr()+"/hook?"+r.URL.RawQuery, http.StatusFound)
	}))
	t.Cleanup(redirector.Close)
	allow := redirector.Listener.Addr().String()
	b := setup(t, allow, allow, 1)
	wantFailure(t, register(t, b, b.Bearer, redirector.URL+"/hook"), webhooks.ReasonCRC)
	if n := target.Accepted(); n != 0 {
		t.Fatalf("the redirect target accepted %d connections", n)
	}
}
