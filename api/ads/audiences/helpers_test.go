package audiences_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/ads/adstest"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/storage"
)

// digest is the SHA-256 hex of v (the identifiers a partner sends).
func digest(v string) string {
	sum := sha256.Sum256([]byte(v))
	return hex.EncodeToString(sum[:])
}

// env is one server with an owner, its account and an audience.
type env struct {
	s        *adstest.Server
	owner    *adstest.Caller
	acct     string
	audience string
}

func newEnv(t testing.TB) *env {
	t.Helper()
	s := adstest.New(t)
	owner := s.User(t, "owner")
	acct := owner.Account(t)
	e := &env{s: s, owner: owner, acct: acct.ID}
	e.audience = e.create(t, owner, acct.ID, "crm list")
	return e
}

func (e *env) create(t testing.TB, c *adstest.Caller, acct, name string) string {
	t.Helper()
	d := c.Post(t, "/12/accounts/"+acct+"/custom_audiences", url.Values{"name": {name}}).Status(t, http.StatusOK).Data(t)
	return d["id"].(string)
}

func (e *env) path(acct, audience string) string {
	return "/12/accounts/" + acct + "/custom_audiences/" + audience
}

// get is the audience as acct's caller c sees it.
func (e *env) get(t testing.TB, c *adstest.Caller, acct, audience string) map[string]any {
	t.Helper()
	return c.Get(t, e.path(acct, audience), nil).Status(t, http.StatusOK).Data(t)
}

// post sends a raw users batch with the given content type and headers.
func (e *env) post(t testing.TB, c *adstest.Caller, acct, audience, contentType string, body []byte, header ...string) adstest.Reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.s.URL+e.path(acct, audience)+"/users", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	if err := auth.SignRequest(req, "", e.s.App.ConsumerKey, e.s.App.ConsumerSecret, c.Token.Token, c.Token.Secret, time.Now(), ""); err != nil {
		t.Fatalf("sign: %v", err)
	}
	return adstest.Send(t, req)
}

// postJSON sends body as application/json to the owner's audience.
func (e *env) postJSON(t testing.TB, body string, header ...string) adstest.Reply {
	t.Helper()
	return e.post(t, e.owner, e.acct, e.audience, "application/json", []byte(body), header...)
}

// applyPending runs the worker on every pending batch, as asynq would on
// the enqueued task, and returns the errors it gave.
func (e *env) applyPending(t testing.TB) []error {
	t.Helper()
	var ids []string
	rows, err := e.s.SQL().Query(context.Background(), `SELECT id FROM custom_audience_batches WHERE state = 'PENDING' ORDER BY created_at, id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	var errs []error
	for _, id := range ids {
		if err := e.apply(t, id); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// apply applies batch id as the worker does, through the store (the
// worker's own checks and retries are tested in workers/audiences; the API
// tier never imports the workers).
func (e *env) apply(t testing.TB, id string) error {
	t.Helper()
	_, err := e.s.DB.ApplyAudienceBatch(context.Background(), id, func([]storage.AudienceOperation) error { return nil })
	return err
}

// size is the stored audience_size and the member rows of audience.
func (e *env) size(t testing.TB, audience string) (size, members int64) {
	t.Helper()
	e.s.Scan(t, `SELECT audience_size, (SELECT count(*) FROM custom_audience_members WHERE audience_id = $1)
		FROM custom_audiences WHERE id = $1`, []any{audience}, &size, &members)
	return size, members
}

func (e *env) batches(t testing.TB) int {
	t.Helper()
	var n int
	e.s.Scan(t, `SELECT count(*) FROM custom_audience_batches`, nil, &n)
	return n
}

// emails is a users array of n single-email users, digests of
// prefix-i@example.com.
func emails(prefix string, n int) string {
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"email":["%s"]}`, digest(fmt.Sprintf("%s-%d@example.com", prefix, i)))
	}
	b.WriteString("]")
	return b.String()
}

// op is one operation of a batch body.
func op(kind, users string) string {
	return fmt.Sprintf(`{"operation_type":%q,"params":{"users":%s}}`, kind, users)
}

// reasons is reasons_not_targetable as strings.
func reasons(d map[string]any) []string {
	var out []string
	for _, r := range d["reasons_not_targetable"].([]any) {
		out = append(out, r.(string))
	}
	return out
}

// maxBatch is a batch of n Update operations of single-email users, as
// many users as fit, padded with spaces to exactly size bytes.
func maxBatch(t testing.TB, n, size int) []byte {
	t.Helper()
	body, _ := fillBatch(t, n, size, len(`{"email":[""]},`)+64, func(b *bytes.Buffer, u int) {
		sum := sha256.Sum256([]byte(fmt.Sprintf("user-%d@example.com", u)))
		b.WriteString(`{"email":["`)
		b.WriteString(hex.EncodeToString(sum[:]))
		b.WriteString(`"]}`)
	})
	return body
}

// fillBatch is a batch of n Update operations of users written by user
// (each userLen bytes with its comma), as many as fit, padded with spaces
// to exactly size bytes, and the number of users.
func fillBatch(t testing.TB, n, size, userLen int, user func(b *bytes.Buffer, u int)) ([]byte, int) {
	t.Helper()
	perOp := (size - n*len(`{"operation_type":"Update","params":{"users":[]}},`) - 2) / userLen / n
	var b bytes.Buffer
	b.Grow(size)
	b.WriteString("[")
	u := 0
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"operation_type":"Update","params":{"users":[`)
		for j := range perOp {
			if j > 0 {
				b.WriteString(",")
			}
			user(&b, u)
			u++
		}
		b.WriteString(`]}}`)
	}
	if b.Len()+1 > size {
		t.Fatalf("batch of %d bytes exceeds %d", b.Len()+1, size)
	}
	b.WriteString(strings.Repeat(" ", size-b.Len()-1))
	b.WriteString("]")
	return b.Bytes(), u
}
