package donotreach_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/api/ads/adstest"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/tasks"
)

// digest is the SHA-256 hex of s, as clients hash identifiers.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// fixture is a server, a caller, its account and its list.
type fixture struct {
	s     *adstest.Server
	alice *adstest.Caller
	acct  storage.AdAccount
	list  string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	s := adstest.New(t)
	alice := s.User(t, "a")
	acct := alice.Account(t)
	d := alice.Post(t, listsPath(acct.ID), url.Values{"description": {"exclusions"}}).Status(t, http.StatusOK).Data(t)
	return fixture{s: s, alice: alice, acct: acct, list: d["id"].(string)}
}

func listsPath(acct string) string { return "/12/accounts/" + acct + "/do_not_reach_lists" }

func (f fixture) itemPath() string { return listsPath(f.acct.ID) + "/" + f.list }

func (f fixture) usersPath() string {
	return "/12/batch/accounts/" + f.acct.ID + "/do_not_reach_lists/" + f.list + "/users"
}

// get reads the list.
func (f fixture) get(t *testing.T) map[string]any {
	t.Helper()
	return f.alice.Get(t, f.itemPath(), nil).Status(t, http.StatusOK).Data(t)
}

// raw sends a signed POST of body with the given content type and headers.
func (f fixture) raw(t *testing.T, path, contentType string, body []byte, header ...string) adstest.Reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.s.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	c := f.alice
	if err := auth.SignRequest(req, "", f.s.App.ConsumerKey, f.s.App.ConsumerSecret, c.Token.Token, c.Token.Secret, time.Now(), ""); err != nil {
		t.Fatalf("sign: %v", err)
	}
	return adstest.Send(t, req)
}

// applyQueued runs what the donotreach worker runs for every batch task
// the API enqueued: the store's apply (feature tests may not import the
// worker; workers/donotreach tests drive its Processor). It returns how
// many tasks it found.
func (f fixture) applyQueued(t *testing.T) int {
	t.Helper()
	insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: f.s.RedisAddr, DB: f.s.RedisDB})
	defer insp.Close()
	infos, err := insp.ListPendingTasks(tasks.QueueAudiences)
	if errors.Is(err, asynq.ErrQueueNotFound) {
		return 0
	}
	if err != nil {
		t.Fatalf("pending tasks: %v", err)
	}
	for _, info := range infos {
		if info.Type != tasks.TypeDoNotReachApply {
			continue
		}
		p, err := tasks.DoNotReachBatch.Parse(asynq.NewTask(info.Type, info.Payload))
		if err != nil {
			t.Fatalf("payload: %v", err)
		}
		if info.ID != tasks.DoNotReachBatch.TaskID(p.BatchID) {
			t.Fatalf("task id %s, want %s", info.ID, tasks.DoNotReachBatch.TaskID(p.BatchID))
		}
		if _, err := f.s.DB.ApplyDoNotReachBatch(t.Context(), p.BatchID); err != nil {
			t.Fatalf("apply %s: %v", p.BatchID, err)
		}
		if err := insp.DeleteTask(tasks.QueueAudiences, info.ID); err != nil {
			t.Fatalf("delete task: %v", err)
		}
	}
	return len(infos)
}

// batches counts the recorded batches of the fixture's list.
func (f fixture) batches(t *testing.T) int {
	t.Helper()
	var n int
	f.s.Scan(t, `SELECT count(*) FROM do_not_reach_batches WHERE list_id = $1`, []any{f.list}, &n)
	return n
}

// op is one operation of a users batch.
func op(typ string, params map[string]any) map[string]any {
	return map[string]any{"operation_type": typ, "params": params}
}

// user is a user object with hashed emails and phone numbers.
func user(emails []string, phones []string) map[string]any {
	u := map[string]any{}
	if emails != nil {
		u["email"] = emails
	}
	if phones != nil {
		u["phone_number"] = phones
	}
	return u
}

// inAMonth is a valid expires_at.
func inAMonth() string { return time.Now().AddDate(0, 1, 0).UTC().Format(time.RFC3339) }
