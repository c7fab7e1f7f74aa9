package local

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/storage/blob"
)

// pathPrefix is where the API mounts Handler.
const pathPrefix = "/blobs/"

// Handler serves presigned URLs. It expects the full request path
// "/blobs/{key}" and strips the prefix itself, so mount it without
// http.StripPrefix:
//
//	mux.Handle("/blobs/", store.Handler())
//
// PUT stores the body atomically (413 beyond MaxUploadBytes) and answers 200
// with an ETag; GET and HEAD stream the object with Range support. A missing,
// invalid or expired signature, or a method the URL was not signed for, gets
// 403; a missing object 404; both with an application/problem+json body.
func (s *Store) Handler() http.Handler {
	return http.HandlerFunc(s.serveHTTP)
}

// VerifyRequest reports whether r carries a valid, unexpired signature for
// its method and blob path, as Handler checks it; a caller that counts
// requests (rate limits) uses it to count only signed ones, so forged
// requests cost the object's owner nothing.
func (s *Store) VerifyRequest(r *http.Request) error {
	key, ok := strings.CutPrefix(r.URL.Path, pathPrefix)
	if !ok || !blob.ValidKey(key) {
		return blob.ErrInvalidKey
	}
	method := r.Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	return s.verify(method, key, r.URL.Query(), time.Now())
}

func (s *Store) serveHTTP(w http.ResponseWriter, r *http.Request) {
	key, ok := strings.CutPrefix(r.URL.Path, pathPrefix)
	if !ok || !blob.ValidKey(key) {
		writeProblem(w, http.StatusNotFound, "Not Found", "no such blob path")
		return
	}
	method := r.Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	if err := s.verify(method, key, r.URL.Query(), time.Now()); err != nil {
		writeProblem(w, http.StatusForbidden, "Forbidden", err.Error())
		return
	}
	if method == http.MethodPut {
		s.servePut(w, r, key)
		return
	}
	s.serveGet(w, r, key)
}

func (s *Store) serveGet(w http.ResponseWriter, r *http.Request, key string) {
	f, info, m, err := s.open(key)
	if errors.Is(err, blob.ErrNotFound) {
		writeProblem(w, http.StatusNotFound, "Not Found", "the object does not exist")
		return
	}
	if err != nil {
		s.internal(w, r, key, err)
		return
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", info.ContentType)
	h.Set("X-Content-Type-Options", "nosniff")
	// Uploaded content is served from the API's origin: never let it run.
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
	if m.ETag != "" {
		h.Set("ETag", m.ETag)
	}
	http.ServeContent(w, r, "", info.LastModified, f)
}

func (s *Store) servePut(w http.ResponseWriter, r *http.Request, key string) {
	if r.ContentLength > s.maxPut {
		writeProblem(w, http.StatusRequestEntityTooLarge, "Payload Too Large", tooLarge(s.maxPut))
		return
	}
	body := http.MaxBytesReader(w, r.Body, s.maxPut)
	etag, err := s.write(r.Context(), key, body, r.ContentLength, r.Header.Get("Content-Type"))
	var tooBig *http.MaxBytesError
	var readErr *readError
	switch {
	case errors.As(err, &tooBig):
		writeProblem(w, http.StatusRequestEntityTooLarge, "Payload Too Large", tooLarge(s.maxPut))
	case errors.As(err, &readErr):
		writeProblem(w, http.StatusBadRequest, "Bad Request", readErr.Error())
	case err != nil:
		s.internal(w, r, key, err)
	default:
		w.Header().Set("ETag", etag)
		w.WriteHeader(http.StatusOK)
	}
}

func (s *Store) internal(w http.ResponseWriter, r *http.Request, key string, err error) {
	s.log.ErrorContext(r.Context(), "local blob handler", "method", r.Method, "key", key, "err", err)
	writeProblem(w, http.StatusInternalServerError, "Internal Server Error", "the blob could not be served")
}

func tooLarge(limit int64) string {
	return "the upload exceeds the limit of " + strconv.FormatInt(limit, 10) + " bytes"
}

// problem is a minimal RFC 9457 problem document.
type problem struct {
	Title  string `json:"title"`
	Detail string `json:"detail"`
	Status int    `json:"status"`
}

func writeProblem(w http.ResponseWriter, status int, title, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(problem{Title: title, Detail: detail, Status: status})
}
