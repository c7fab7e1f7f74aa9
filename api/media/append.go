package media

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// Append (docs/media-upload.md): the upload is checked first (the caller's,
// still uploading, not expired), then the segment's bytes go straight into
// a blob object of their own, storage.MediaSegmentKey(id, <random>), and
// the copy is recorded. A multipart body is streamed part by part, never
// buffered (its `media` part may come before or after `segment_index`); a
// JSON body ({"media": "<base64>", "segment_index": n}) is capped by the
// endpoint's Body rule and decoded in memory. Whatever fails after the
// object was written deletes it again: a refused append stores nothing.

// segmentContentType is the content type of the segment objects.
const segmentContentType = "application/octet-stream"

// cleanupTimeout bounds deleting the object of a refused segment, which
// runs even when the client has gone away.
const cleanupTimeout = 10 * time.Second

// recordTimeout bounds recording a stored segment, which runs even when
// the client has gone away.
const recordTimeout = 10 * time.Second

// maxIndexField caps the segment_index part of a multipart body.
const maxIndexField = 32

// errSegmentTooLarge stops reading a segment past its cap.
var errSegmentTooLarge = errors.New("segment over its size cap")

type appendRequest struct {
	Media string `json:"media" validate:"required"`
	// SegmentIndex is checked by checkIndex.
	SegmentIndex *int `json:"segment_index" validate:"required"`
}

// segment is one stored copy of a segment, not yet recorded.
type segment struct {
	index int
	key   string
	size  int64
}

// appendSegment serves POST /2/media/upload/{id}/append.
func (m *Module) appendSegment(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathID(r, "id")
	if err != nil {
		return err
	}
	if r.ContentLength > appendMaxBody { // declared too large: refused before anything is read
		return apierr.PayloadTooLarge(appendMaxBody)
	}
	media, err := m.uploading(r.Context(), httpx.Principal(r).User.ID, id, m.Clock().UTC())
	if err != nil {
		return err
	}
	var seg segment
	if httpx.BodyType(r) == httpx.ContentMultipart {
		seg, err = m.readMultipart(r, media)
	} else {
		seg, err = m.readJSON(r, media)
	}
	if err != nil {
		return err
	}
	// The bytes are stored: record them even if the client goes away now
	// (a retry adds a newer copy, which counts).
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), recordTimeout)
	defer cancel()
	media, err = m.record(ctx, media, seg)
	if err != nil {
		// Only a refused segment is known to have no row: after another
		// failure (a timeout, a lost commit acknowledgement) the row may
		// exist, and deleting its object would break the upload. The
		// object is kept then (an orphan if the row does not exist).
		var refusal *apierr.Error
		if errors.As(err, &refusal) {
			m.discard(ctx, seg.key)
		} else {
			m.Logger.WarnContext(ctx, "segment stored but not known to be recorded; object kept", "media_id", media.ID, "key", seg.key, "err", err)
		}
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, appendResponse{Data: appendObject{ExpiresAt: media.ExpiresAt.Unix()}})
}

// record records seg as a copy of its index of media. The upload may have
// been finalized, or have expired, while the bytes arrived (409), or been
// removed by the sweeper (404).
func (m *Module) record(ctx context.Context, media storage.Media, seg segment) (storage.Media, error) {
	now := m.Clock().UTC()
	stored, err := m.Store.AddMediaSegment(ctx, storage.MediaSegment{MediaID: media.ID, Index: seg.index, Key: seg.key, Size: seg.size}, now)
	switch {
	case errors.Is(err, storage.ErrConflict):
		if cerr := closed(stored, now); cerr != nil {
			return stored, cerr
		}
		return stored, apierr.Conflict(alreadyFinalized(media.ID))
	case errors.Is(err, storage.ErrNotFound):
		return stored, notFound("id", media.ID)
	case err != nil:
		return stored, fmt.Errorf("record segment %d of media %d: %w", seg.index, media.ID, err)
	}
	return stored, nil
}

// readJSON decodes a JSON append and stores its segment.
func (m *Module) readJSON(r *http.Request, media storage.Media) (segment, error) {
	index, data, err := decodeAppend(r, m.Validator)
	if err != nil {
		return segment{}, err
	}
	if err := checkSize(media, int64(len(data))); err != nil {
		return segment{}, err
	}
	key, err := segmentKey(media.ID)
	if err != nil {
		return segment{}, err
	}
	if err := m.Blobs.Put(r.Context(), key, bytes.NewReader(data), int64(len(data)), segmentContentType); err != nil {
		m.discard(r.Context(), key)
		return segment{}, fmt.Errorf("store segment %d of media %d: %w", index, media.ID, err)
	}
	return segment{index: index, key: key, size: int64(len(data))}, nil
}

// decodeAppend reads a JSON append's segment_index and decoded media
// bytes; every refusal is a 400.
func decodeAppend(r *http.Request, val *validation.Validator) (int, []byte, error) {
	var req appendRequest
	if err := httpx.Bind(r, val, &req); err != nil {
		return 0, nil, err
	}
	if err := checkIndex(*req.SegmentIndex); err != nil {
		return 0, nil, err
	}
	data, err := base64.StdEncoding.DecodeString(req.Media)
	if err != nil {
		return 0, nil, apierr.InvalidParam("media", fmt.Sprintf("The `media` field is not valid base64 (standard alphabet, padded): %v.", err))
	}
	return *req.SegmentIndex, data, nil
}

// readMultipart reads a multipart append part by part, streaming its
// `media` part into a segment object. On error that object is deleted.
func (m *Module) readMultipart(r *http.Request, media storage.Media) (segment, error) {
	mr, err := multipartReader(r)
	if err != nil {
		return segment{}, apierr.InvalidParam("body", fmt.Sprintf("The request body is not a valid multipart form: %v.", err))
	}
	f := &formSegment{m: m, media: media, index: -1}
	err = f.read(r.Context(), mr)
	if err == nil {
		err = f.complete()
	}
	if err != nil {
		m.discard(r.Context(), f.seg.key)
		return segment{}, err
	}
	return f.seg, nil
}

// multipartReadBuffer is how much of a multipart body is read from the
// connection at once: multipart.Reader peeks in 4 KiB steps, which on its
// own means a read call per 4 KiB of a 5 MiB segment.
const multipartReadBuffer = 256 << 10

// multipartReader is r.MultipartReader over a large read buffer.
func multipartReader(r *http.Request) (*multipart.Reader, error) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != httpx.ContentMultipart {
		return nil, http.ErrNotMultipart
	}
	if params["boundary"] == "" {
		return nil, http.ErrMissingBoundary
	}
	return multipart.NewReader(bufio.NewReaderSize(r.Body, multipartReadBuffer), params["boundary"]), nil
}

// formSegment collects the fields of one multipart append.
type formSegment struct {
	m     *Module
	media storage.Media
	seg   segment
	index int // -1 until segment_index is read
}

// read consumes every part of mr.
func (f *formSegment) read(ctx context.Context, mr *multipart.Reader) error {
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return httpx.BodyReadError(ctx, err)
		}
		err = f.readPart(ctx, part)
		part.Close()
		if err != nil {
			return err
		}
	}
}

func (f *formSegment) readPart(ctx context.Context, part *multipart.Part) error {
	switch name := part.FormName(); name {
	case "media":
		if f.seg.key != "" {
			return apierr.InvalidParam("media", "The `media` field may be given only once.")
		}
		return f.store(ctx, part)
	case "segment_index":
		if f.index >= 0 {
			return apierr.InvalidParam("segment_index", "The `segment_index` field may be given only once.")
		}
		return f.readIndex(ctx, part)
	case "":
		return apierr.InvalidParam("body", "Every part of the multipart body must be a form field with a name (`media`, `segment_index`).")
	default:
		return apierr.InvalidParam(name, fmt.Sprintf("The `%s` field is not a valid field for this request.", name))
	}
}

// store streams the media part into a new segment object.
func (f *formSegment) store(ctx context.Context, part *multipart.Part) error {
	key, err := segmentKey(f.media.ID)
	if err != nil {
		return err
	}
	f.seg.key = key // deleted by readMultipart on any later error
	body := &segmentReader{r: part, limit: segmentLimit(f.media)}
	err = f.m.Blobs.Put(ctx, key, body, -1, segmentContentType)
	switch {
	case errors.Is(body.err, errSegmentTooLarge):
		return checkSize(f.media, body.n)
	case body.err != nil:
		return httpx.BodyReadError(ctx, body.err)
	case err != nil && ctx.Err() != nil:
		return apierr.ClientDisconnected()
	case err != nil:
		return fmt.Errorf("store a segment of media %d: %w", f.media.ID, err)
	}
	f.seg.size = body.n
	return checkSize(f.media, body.n)
}

// readIndex reads and checks the segment_index part.
func (f *formSegment) readIndex(ctx context.Context, part *multipart.Part) error {
	raw, err := io.ReadAll(io.LimitReader(part, maxIndexField+1))
	if err != nil {
		return httpx.BodyReadError(ctx, err)
	}
	n, err := parseIndex(raw)
	if err != nil || len(raw) > maxIndexField {
		return apierr.InvalidParam("segment_index", fmt.Sprintf("The `segment_index` field value [%.32s] is not an integer.", raw), string(raw[:min(len(raw), maxIndexField)]))
	}
	if err := checkIndex(n); err != nil {
		return err
	}
	f.index = n
	return nil
}

// complete checks that both fields were sent.
func (f *formSegment) complete() error {
	if f.seg.key == "" {
		return apierr.InvalidParam("media", "The `media` field is required: the bytes of the segment, as a file part or a field.")
	}
	if f.index < 0 {
		return apierr.InvalidParam("segment_index", "The `segment_index` field is required.")
	}
	f.seg.index = f.index
	return nil
}

// checkIndex checks a segment_index.
func checkIndex(n int) error {
	if n < 0 || n > storage.MediaMaxSegmentIndex {
		return httpx.Refuse("segment_index", validation.Problemf([]string{strconv.Itoa(n)}, "The `%[1]s` field value [%[2]d] must be between 0 and %[3]d.",
			n, storage.MediaMaxSegmentIndex))
	}
	return nil
}

// segmentLimit is the largest segment media takes: storage.MediaMaxSegment,
// and never more than the upload's total_bytes.
func segmentLimit(media storage.Media) int64 {
	return min(int64(storage.MediaMaxSegment), media.TotalBytes)
}

// checkSize checks a segment of n bytes against its limits: not empty, at
// most segmentLimit.
func checkSize(media storage.Media, n int64) error {
	switch {
	case n == 0:
		return httpx.Refuse("media", validation.Problemf(nil, "The `%[1]s` segment is empty; a segment holds 1 byte or more."))
	case n > storage.MediaMaxSegment:
		return httpx.Refuse("media", validation.Problemf(nil, "The `%[1]s` segment is larger than %[2]d bytes (5 MiB), the largest segment; split it into smaller segments.",
			storage.MediaMaxSegment))
	case n > media.TotalBytes:
		return httpx.Refuse("media", validation.Problemf(nil, "The `%[1]s` segment is larger than the upload's total_bytes (%[2]d).", media.TotalBytes))
	}
	return nil
}

// segmentKey is a new segment object's key: random, so concurrent or
// retried appends never write the same object.
func segmentKey(id int64) (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("segment key of media %d: %w", id, err)
	}
	return storage.MediaSegmentKey(id, hex.EncodeToString(b)), nil
}

// discard deletes the object of a refused segment (nothing when key is
// empty); a failure is logged: the object is then an orphan under the
// media's prefix.
func (m *Module) discard(ctx context.Context, key string) {
	if key == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	if err := m.Blobs.Delete(ctx, key); err != nil {
		m.Logger.WarnContext(ctx, "delete the object of a refused media segment", "key", key, "err", err)
	}
}

// segmentReader counts the bytes read from r and fails with
// errSegmentTooLarge once they pass limit. It keeps its first error other
// than io.EOF, so a failed Put can be told apart: the client's body (over
// a cap, broken off) or the blob store.
type segmentReader struct {
	r     io.Reader
	limit int64
	n     int64
	err   error
}

// Read fills p as far as the source allows before returning, so the blob
// store writes in its own buffer's size rather than in the 4 KiB steps a
// multipart part yields.
func (s *segmentReader) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := fill(s.r, p)
	s.n += int64(n)
	switch {
	case s.n > s.limit:
		s.err = errSegmentTooLarge
		return n, s.err
	case err != nil && err != io.EOF:
		s.err = err
	}
	return n, err
}

// fill reads from r until p is full or r returns an error (io.EOF
// included), which it returns as is: unlike io.ReadFull it never turns a
// source's own io.ErrUnexpectedEOF (a multipart body that broke off) into
// something else, nor a clean end into one.
func fill(r io.Reader, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := r.Read(p[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// parseIndex reads a form's segment_index the way the JSON encoding reads
// it: plain decimal digits, no sign, no leading zero ("0" itself aside).
func parseIndex(raw []byte) (int, error) {
	if len(raw) == 0 || (len(raw) > 1 && raw[0] == '0') {
		return 0, strconv.ErrSyntax
	}
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, strconv.ErrSyntax
		}
	}
	return strconv.Atoi(string(raw))
}
