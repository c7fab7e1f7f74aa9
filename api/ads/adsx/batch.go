package adsx

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/tasks"
)

// Users batches (docs/architecture.md, "Batches: record, sweep, apply"):
// a batch endpoint checks the body, records the batch under the request's
// idempotency key, enqueues its task after the commit and answers.

// IdempotencyHeader names the header a client marks retries of a batch
// request with.
const IdempotencyHeader = "Idempotency-Key"

// maxIdempotencyKey bounds the Idempotency-Key header.
const maxIdempotencyKey = 255

// IdempotencyKey is the request's Idempotency-Key header ("" when not
// sent): one value of 1 to 255 printable ASCII characters, else an error
// naming the header.
func IdempotencyKey(r *http.Request) (string, error) {
	vs := r.Header.Values(IdempotencyHeader)
	if len(vs) == 0 {
		return "", nil
	}
	v := vs[0]
	if len(vs) > 1 || v == "" || len(v) > maxIdempotencyKey || strings.ContainsFunc(v, func(c rune) bool { return c < 0x21 || c > 0x7e }) {
		return "", Invalid(IdempotencyHeader, fmt.Sprintf("%s must be one value of 1 to %d printable ASCII characters",
			IdempotencyHeader, maxIdempotencyKey))
	}
	return v, nil
}

// BatchBody is a users batch request as read: its Idempotency-Key ("" when
// none), its body and the body's hex SHA-256, and when it was read (the
// clock its times are checked against).
type BatchBody struct {
	Key    string
	Body   []byte
	SHA256 string
	At     time.Time
}

// ReadBatch reads a users batch request, once the entities of its path
// were checked: its Content-Type must be named (the batch endpoints name
// theirs), its Idempotency-Key valid, and its body (capped by the
// endpoint's Body) is read into one buffer sized by Content-Length, up to
// max, sparing the copies of a growing one.
func ReadBatch(r *http.Request, max int64) (BatchBody, error) {
	var b BatchBody
	if r.Header.Get("Content-Type") == "" {
		return b, apierr.UnsupportedMediaType(httpx.ContentJSON)
	}
	key, err := IdempotencyKey(r)
	if err != nil {
		return b, err
	}
	size := int64(0)
	if r.ContentLength > 0 {
		size = min(r.ContentLength, max)
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	if _, err := buf.ReadFrom(r.Body); err != nil {
		return b, httpx.BodyReadError(r.Context(), err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return BatchBody{Key: key, Body: buf.Bytes(), SHA256: hex.EncodeToString(sum[:]), At: time.Now().UTC()}, nil
}

// KeyReused answers storage.ErrRequestKeyReused: the Idempotency-Key of
// an earlier request sent with another body.
func KeyReused() *apierr.Error {
	return Invalid(IdempotencyHeader, fmt.Sprintf("The %s was already used for a different request body", IdempotencyHeader))
}

// EnqueueBatch hands the apply task of a recorded batch of kind, in state,
// to the queue after the commit (tasks.EnqueueRecorded) while the batch
// may still become APPLIED; a retry's batch too (its task id makes that a
// no-op while the task is queued).
func (k Kit) EnqueueBatch(ctx context.Context, kind storage.BatchKind, state storage.BatchState, task func() (*asynq.Task, error)) {
	if kind.CanBecome(state, storage.BatchApplied) {
		tasks.EnqueueRecorded(ctx, k.Queue, k.Logger, string(kind), task)
	}
}
