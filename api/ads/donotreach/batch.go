package donotreach

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/tasks"
)

// Limits of the users batch (the reference's).
const (
	// MaxOperations is the most operations one batch takes.
	MaxOperations = 2500
	// MaxBatchBytes caps the batch body.
	MaxBatchBytes = 5_000_000
	// batchRequestsPerMinute is the endpoint's rate, per account.
	batchRequestsPerMinute = 1500
	// maxReportedErrors bounds the errors one rejected batch lists.
	maxReportedErrors = 100
)

// RetryWindow is how long a request with the same body (or the same
// Idempotency-Key) is taken as a retry of one already recorded.
const RetryWindow = 24 * time.Hour

var (
	usersBody  = httpx.Body{MaxBytes: MaxBatchBytes, Types: []string{httpx.ContentJSON}}
	usersLimit = httpx.Limit{Name: "ads_do_not_reach_users", Requests: batchRequestsPerMinute, Window: time.Minute,
		Scope: httpx.PerResource, Resource: "account_id"}
)

// users is POST batch/.../do_not_reach_lists/:id/users: the whole batch
// is checked (any bad operation rejects it, naming the operation and
// field), recorded with its task and answered; the worker applies it.
func (m *Module) users(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	listID := r.PathValue("do_not_reach_list_id")
	// The list first, as an entity of the path is checked everywhere before
	// the body (recording checks it again, under its lock).
	if _, err := m.deps.Store.DoNotReachList(r.Context(), acct.ID, listID, false); err != nil {
		return recordErr(err, listID)
	}
	req, err := adsx.ReadBatch(r, MaxBatchBytes)
	if err != nil {
		return err
	}
	ops, err := parseBatch(req.Body, req.At)
	if err != nil {
		return err
	}
	b, err := m.deps.Store.RecordDoNotReachBatch(r.Context(), storage.NewDoNotReachBatch{AccountID: acct.ID, ListID: listID,
		RequestKey: requestKey(req.Key, req.SHA256), BodySHA256: req.SHA256, Operations: ops, RetryWindow: RetryWindow})
	if err != nil {
		return recordErr(err, listID)
	}
	m.deps.Kit.EnqueueBatch(r.Context(), storage.DoNotReachBatches, b.State, func() (*asynq.Task, error) { return tasks.DoNotReachBatch.New(b.ID) })
	return httpx.WriteJSON(w, http.StatusOK, batchResponse(acct.ID, b))
}

// requestKey is the request key of a batch: its Idempotency-Key, else
// its body's digest.
func requestKey(key, digest string) string {
	if key == "" {
		return "body:" + digest
	}
	return "key:" + key
}

// recordErr maps a store error of recording a batch of list id.
func recordErr(err error, id string) error {
	switch {
	case errors.Is(err, storage.ErrRequestKeyReused):
		return adsx.KeyReused()
	case errors.Is(err, storage.ErrNotFound):
		return adsx.NotFound(adsx.CodeNotFound, "do_not_reach_list_id", id)
	}
	return fmt.Errorf("record users batch of do-not-reach list %s: %w", id, err)
}

// batchItem is one data item of the response.
type batchItem struct {
	SuccessCount int `json:"success_count"`
	TotalCount   int `json:"total_count"`
}

// batchRequest is one request item of the response.
type batchRequest struct {
	Params        batchParams `json:"params"`
	OperationType string      `json:"operation_type"`
}

type batchParams struct {
	DoNotReachListID string `json:"do_not_reach_list_id"`
	ExpiresAt        string `json:"expires_at"`
	AccountID        string `json:"account_id"`
}

type batchJSON struct {
	Data    []batchItem    `json:"data"`
	Request []batchRequest `json:"request"`
}

// batchResponse answers a recorded batch: per operation, in request
// order, its count of users and what it echoes. A retry gets the answer
// of the batch it repeats.
func batchResponse(accountID string, b storage.DoNotReachBatch) batchJSON {
	out := batchJSON{Data: make([]batchItem, len(b.Operations)), Request: make([]batchRequest, len(b.Operations))}
	for i, op := range b.Operations {
		out.Data[i] = batchItem{SuccessCount: op.Count, TotalCount: op.Count}
		out.Request[i] = batchRequest{OperationType: op.Type,
			Params: batchParams{DoNotReachListID: b.ListID, ExpiresAt: adsx.Time(op.ExpiresAt), AccountID: accountID}}
	}
	return out
}

// operationJSON is one operation as sent.
type operationJSON struct {
	OperationType *string     `json:"operation_type"`
	Params        *paramsJSON `json:"params"`
}

type paramsJSON struct {
	Users     *[]userJSON `json:"users"`
	Emails    *[]string   `json:"emails"`
	ExpiresAt *string     `json:"expires_at"`
}

type userJSON struct {
	Email       []string `json:"email"`
	PhoneNumber []string `json:"phone_number"`
}

// parseBatch decodes and checks a batch body against now: a JSON array
// of 1 to MaxOperations operations, each valid. Every problem found is
// reported at once, each naming its operation and field.
func parseBatch(body []byte, now time.Time) ([]storage.DoNotReachOperation, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, adsx.Invalid("operations", "The request body must be a JSON array of operations")
	}
	if err := adsx.RepeatedKeys(body, "operations"); err != nil {
		return nil, err
	}
	c := checker{now: now}
	var ops []storage.DoNotReachOperation
	for i := 0; dec.More(); i++ {
		if i == MaxOperations {
			return nil, adsx.Invalid("operations", fmt.Sprintf("A batch takes at most %d operations", MaxOperations))
		}
		var raw operationJSON
		if err := dec.Decode(&raw); err != nil {
			return nil, decodeErr(i, err)
		}
		ops = append(ops, c.operation(fmt.Sprintf("operations[%d]", i), raw))
	}
	if _, err := dec.Token(); err != nil {
		return nil, adsx.Invalid("operations", "The request body must be a JSON array of operations")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, adsx.Invalid("operations", "The request body must hold one JSON array of operations")
	}
	if len(ops) == 0 {
		return nil, adsx.Invalid("operations", "A batch takes at least one operation")
	}
	return ops, c.err()
}

// decodeErr names the field of operation i that did not decode.
func decodeErr(i int, err error) error {
	name := fmt.Sprintf("operations[%d]", i)
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		name += "." + typeErr.Field
		return adsx.Invalid(name, fmt.Sprintf("%s must be of type %s, not %s", name, typeErr.Type, typeErr.Value))
	}
	if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return adsx.Invalid(name, fmt.Sprintf("%s has an unknown field %s", name, field))
	}
	return adsx.Invalid(name, fmt.Sprintf("%s is not valid JSON: %v", name, err))
}
