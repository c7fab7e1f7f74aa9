package local

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/storage/blob"
)

// Multipart uploads are staged under Dir/.uploads, outside objects/, so no
// key maps to them and Handler never serves them:
//
//	.uploads/<id>/upload.json                key and content type
//	.uploads/<id>/00001/<stamp>-<md5hex>     part 1: a version of it
//
// A part is spooled into tmp/ and renamed into place, so a staged part is
// always complete; its name holds its ETag (the MD5 of its content) and a
// stamp, 20 zero-padded digits: the time it was staged in nanoseconds, or
// one more than the newest version's if that is larger, so names sort by
// age whatever the clock's resolution. Re-uploading a part number adds a
// newer version and removes older ones; readers use the newest (concurrent
// uploads of one number: the later-staged wins). Complete
// and abort first rename the staging directory into tmp/ (so concurrent
// calls on the upload find it gone) and then remove it.

var _ blob.Multiparter = (*Store)(nil)

const (
	uploadFile  = "upload.json"
	uploadIDLen = 16 // random bytes, hex-encoded in ids
	// staleUploadAge is how long after its last part New deletes an upload
	// that was neither completed nor aborted.
	staleUploadAge = 24 * time.Hour
)

// upload is the content of upload.json.
type upload struct {
	Key         string `json:"key"`
	ContentType string `json:"content_type"`
}

// partFile is one staged version of a part.
type partFile struct {
	number int
	stamp  int64  // orders versions by age
	sum    string // hex MD5
	size   int64
	path   string
}

func (p partFile) etag() string { return `"` + p.sum + `"` }

// versionName names a version of a part with content MD5 sum, newer than
// the versions (newest first) already staged.
func versionName(sum string, versions []partFile) string {
	stamp := time.Now().UnixNano()
	if len(versions) > 0 {
		stamp = max(stamp, versions[0].stamp+1)
	}
	return fmt.Sprintf("%020d-%s", stamp, sum)
}

// parseVersionName returns the stamp and MD5 in a name made by
// versionName.
func parseVersionName(name string) (stamp int64, sum string, ok bool) {
	digits, sum, ok := strings.Cut(name, "-")
	if !ok || len(digits) != 20 || len(sum) != 2*md5.Size || !isLowerHex(sum) {
		return 0, "", false
	}
	stamp, err := strconv.ParseInt(digits, 10, 64)
	return stamp, sum, err == nil
}

// CreateMultipart starts a multipart upload for key and returns its id.
func (s *Store) CreateMultipart(ctx context.Context, key, contentType string) (string, error) {
	if err := blob.CheckKey("create upload", key); err != nil {
		return "", err
	}
	if contentType == "" {
		contentType = blob.DefaultContentType
	}
	id, err := s.createUpload(upload{Key: key, ContentType: contentType})
	if err != nil {
		return "", fmt.Errorf("create upload for %s: %w", key, err)
	}
	return id, nil
}

// createUpload builds a staging directory in tmp/ and renames it into
// .uploads/, so it never appears without its upload.json.
func (s *Store) createUpload(u upload) (string, error) {
	id, err := newUploadID()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(s.tmp, "upload-*")
	if err != nil {
		return "", err
	}
	err = s.fillUploadDir(dir, u)
	if err == nil {
		err = os.Rename(dir, filepath.Join(s.uploads, id))
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	syncDir(s.uploads)
	return id, nil
}

// fillUploadDir writes upload.json into a new staging directory.
func (s *Store) fillUploadDir(dir string, u upload) error {
	tmp, err := writeJSONTemp(dir, "upload-*", u)
	if err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, uploadFile))
}

func newUploadID() (string, error) {
	b := make([]byte, uploadIDLen)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// validUploadID reports whether id has the shape newUploadID produces (so
// it is one path segment and never "." or "..").
func validUploadID(id string) bool {
	return len(id) == 2*uploadIDLen && isLowerHex(id)
}

func isLowerHex(s string) bool {
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// loadUpload returns the staging directory and description of upload id,
// or blob.ErrUploadNotFound if there is none for key.
func (s *Store) loadUpload(key, id string) (string, upload, error) {
	if !validUploadID(id) {
		return "", upload{}, blob.ErrUploadNotFound
	}
	dir := filepath.Join(s.uploads, id)
	b, err := os.ReadFile(filepath.Join(dir, uploadFile))
	if err != nil {
		return "", upload{}, uploadNotFound(err)
	}
	var u upload
	if err := json.Unmarshal(b, &u); err != nil {
		return "", upload{}, fmt.Errorf("read %s: %w", uploadFile, err)
	}
	if u.Key != key {
		return "", upload{}, blob.ErrUploadNotFound
	}
	return dir, u, nil
}

// uploadNotFound maps a missing file to blob.ErrUploadNotFound.
func uploadNotFound(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return blob.ErrUploadNotFound
	}
	return err
}

// UploadPart stores part number of upload id, streaming it to disk (size
// -1 means unknown). Uploading a number again replaces the part.
func (s *Store) UploadPart(ctx context.Context, key, id string, number int, r io.Reader, size int64) (blob.Part, error) {
	if err := blob.CheckKey("upload part", key); err != nil {
		return blob.Part{}, err
	}
	p, err := s.uploadPart(ctx, key, id, number, r, size)
	if err != nil {
		return blob.Part{}, fmt.Errorf("upload part %d of upload %s for %s: %w", number, id, key, err)
	}
	return p, nil
}

func (s *Store) uploadPart(ctx context.Context, key, id string, number int, r io.Reader, size int64) (blob.Part, error) {
	if err := blob.CheckPart(id, number, size); err != nil {
		return blob.Part{}, err
	}
	dir, _, err := s.loadUpload(key, id)
	if err != nil {
		return blob.Part{}, err
	}
	if size < 0 {
		r = &capReader{r: r, left: blob.MaxPartSize}
	}
	tmp, etag, n, err := s.spool(ctx, r, size)
	if err != nil {
		return blob.Part{}, err
	}
	if err := stagePart(dir, number, tmp, strings.Trim(etag, `"`)); err != nil {
		os.Remove(tmp)
		return blob.Part{}, err
	}
	now := time.Now()
	_ = os.Chtimes(dir, now, now) // activity mark for removeStaleUploads
	return blob.Part{Number: number, ETag: etag, Size: n}, nil
}

// stagePart renames the spooled part tmp, of MD5 sum, into the upload's
// directory dir as the newest version of the part, and removes the older
// ones. It never recreates dir: once the upload is completed or aborted, it
// fails with blob.ErrUploadNotFound.
func stagePart(dir string, number int, tmp, sum string) error {
	numDir := filepath.Join(dir, fmt.Sprintf("%05d", number))
	if err := os.Mkdir(numDir, 0o750); err != nil && !errors.Is(err, fs.ErrExist) {
		return uploadNotFound(err)
	}
	older, _ := partVersions(numDir, number)
	if err := os.Rename(tmp, filepath.Join(numDir, versionName(sum, older))); err != nil {
		return uploadNotFound(err)
	}
	for _, v := range older {
		os.Remove(v.path)
	}
	return nil
}

// partVersions lists the versions of part number staged in numDir, newest
// first.
func partVersions(numDir string, number int) ([]partFile, error) {
	entries, err := os.ReadDir(numDir)
	if err != nil {
		return nil, err
	}
	var versions []partFile
	for _, e := range slices.Backward(entries) { // ReadDir sorts by name
		stamp, sum, ok := parseVersionName(e.Name())
		fi, err := e.Info()
		if !ok || err != nil || !fi.Mode().IsRegular() {
			continue
		}
		versions = append(versions, partFile{
			number: number, stamp: stamp, sum: sum, size: fi.Size(), path: filepath.Join(numDir, e.Name()),
		})
	}
	return versions, nil
}

// stagedParts returns the newest version of every part staged in the
// upload directory dir, in part-number order.
func stagedParts(dir string) ([]partFile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, uploadNotFound(err)
	}
	var parts []partFile
	for _, e := range entries {
		number, err := strconv.Atoi(e.Name())
		if err != nil || len(e.Name()) != 5 || !e.IsDir() {
			continue
		}
		versions, err := partVersions(filepath.Join(dir, e.Name()), number)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if len(versions) > 0 {
			parts = append(parts, versions[0])
		}
	}
	return parts, nil // ReadDir sorts by name: part-number order
}

// capReader fails with blob.ErrInvalidPart once more than left bytes were
// read.
type capReader struct {
	r    io.Reader
	left int64
}

func (c *capReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.left -= int64(n); c.left < 0 {
		return n, fmt.Errorf("part over %d bytes: %w", int64(blob.MaxPartSize), blob.ErrInvalidPart)
	}
	return n, err
}

// ListParts returns the parts uploaded so far, in part-number order.
func (s *Store) ListParts(ctx context.Context, key, id string) ([]blob.Part, error) {
	if err := blob.CheckKey("list parts", key); err != nil {
		return nil, err
	}
	dir, _, err := s.loadUpload(key, id)
	var files []partFile
	if err == nil {
		files, err = stagedParts(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("list parts of upload %s for %s: %w", id, key, err)
	}
	parts := make([]blob.Part, len(files))
	for i, f := range files {
		parts[i] = blob.Part{Number: f.number, ETag: f.etag(), Size: f.size}
	}
	return parts, nil
}

// CompleteMultipart concatenates parts into a temp file and installs it as
// key like Put does, then removes the upload.
func (s *Store) CompleteMultipart(ctx context.Context, key, id string, parts []blob.Part) (blob.Info, error) {
	if err := blob.CheckKey("complete upload", key); err != nil {
		return blob.Info{}, err
	}
	info, err := s.complete(ctx, key, id, parts)
	if err != nil {
		return blob.Info{}, fmt.Errorf("complete upload %s for %s: %w", id, key, err)
	}
	return info, nil
}

func (s *Store) complete(ctx context.Context, key, id string, parts []blob.Part) (blob.Info, error) {
	if err := blob.CheckCompleteParts(id, parts); err != nil {
		return blob.Info{}, err
	}
	dir, u, err := s.loadUpload(key, id)
	if err != nil {
		return blob.Info{}, err
	}
	files, err := matchParts(dir, parts)
	if err != nil {
		return blob.Info{}, err
	}
	tmp, etag, err := s.concat(ctx, files)
	if err != nil {
		return blob.Info{}, err
	}
	m := meta{ContentType: u.ContentType, ETag: etag}
	fi, err := os.Stat(tmp)
	if err == nil {
		err = s.commitUpload(key, dir, tmp, m)
	}
	if err != nil {
		os.Remove(tmp)
		return blob.Info{}, err
	}
	return infoOf(key, fi, m), nil
}

// commitUpload takes the upload directory dir away from concurrent calls,
// installs tmp as key and removes dir. If installing fails, dir is put back
// so the caller may retry.
func (s *Store) commitUpload(key, dir, tmp string, m meta) error {
	trash, err := s.claim(dir)
	if err != nil {
		return err
	}
	if err := s.commit(key, tmp, m); err != nil {
		_ = os.Rename(filepath.Join(trash, filepath.Base(dir)), dir)
		os.RemoveAll(trash)
		return err
	}
	os.RemoveAll(trash)
	return nil
}

// claim moves the upload directory dir into a fresh directory under tmp/,
// which it returns; blob.ErrUploadNotFound if dir is already gone.
func (s *Store) claim(dir string) (string, error) {
	trash, err := os.MkdirTemp(s.tmp, "upload-done-*")
	if err != nil {
		return "", err
	}
	if err := os.Rename(dir, filepath.Join(trash, filepath.Base(dir))); err != nil {
		os.Remove(trash)
		return "", uploadNotFound(err)
	}
	return trash, nil
}

// matchParts returns the staged files of parts, checking that each exists
// with the given ETag and that all but the last are at least
// blob.MinPartSize.
func matchParts(dir string, parts []blob.Part) ([]partFile, error) {
	staged, err := stagedParts(dir)
	if err != nil {
		return nil, err
	}
	files := make([]partFile, len(parts))
	for i, p := range parts {
		j, found := slices.BinarySearchFunc(staged, p.Number, func(f partFile, n int) int { return f.number - n })
		if !found || staged[j].sum != normalizeETag(p.ETag) {
			return nil, fmt.Errorf("part %d with ETag %s was not uploaded: %w", p.Number, p.ETag, blob.ErrInvalidPart)
		}
		if i < len(parts)-1 && staged[j].size < blob.MinPartSize {
			return nil, fmt.Errorf("part %d is %d bytes, under the minimum %d for all parts but the last: %w",
				p.Number, staged[j].size, blob.MinPartSize, blob.ErrInvalidPart)
		}
		files[i] = staged[j]
	}
	return files, nil
}

func normalizeETag(etag string) string {
	return strings.ToLower(strings.Trim(etag, `"`))
}

// concat copies files into a fresh fsynced temp file and returns its path
// and an S3-style multipart ETag (MD5 of the parts' MD5s, "-" part count).
func (s *Store) concat(ctx context.Context, files []partFile) (path, etag string, err error) {
	f, err := os.CreateTemp(s.tmp, "complete-*")
	if err != nil {
		return "", "", err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	buf := make([]byte, copyBufSize)
	sums := md5.New()
	for _, p := range files {
		if err := appendFile(ctx, f, p.path, buf); err != nil {
			return "", "", err
		}
		b, _ := hex.DecodeString(p.sum)
		sums.Write(b)
	}
	if err := closeSynced(f); err != nil {
		return "", "", err
	}
	return f.Name(), fmt.Sprintf(`"%s-%d"`, hex.EncodeToString(sums.Sum(nil)), len(files)), nil
}

// appendFile copies the file at path to w; a missing file (the upload was
// aborted meanwhile) is blob.ErrUploadNotFound.
func appendFile(ctx context.Context, w io.Writer, path string, buf []byte) error {
	src, err := os.Open(path)
	if err != nil {
		return uploadNotFound(err)
	}
	defer src.Close()
	_, err = io.CopyBuffer(w, ctxReader{ctx, src}, buf)
	return err
}

// AbortMultipart removes upload id and its parts.
func (s *Store) AbortMultipart(ctx context.Context, key, id string) error {
	if err := blob.CheckKey("abort upload", key); err != nil {
		return err
	}
	dir, _, err := s.loadUpload(key, id)
	var trash string
	if err == nil {
		trash, err = s.claim(dir)
	}
	if err != nil {
		return fmt.Errorf("abort upload %s for %s: %w", id, key, err)
	}
	os.RemoveAll(trash) // leftovers are removed with stale temp files
	return nil
}

// removeStaleUploads deletes uploads without a part uploaded for age;
// errors are ignored.
func (s *Store) removeStaleUploads(age time.Duration) {
	for _, name := range staleEntries(s.uploads, age) {
		if trash, err := s.claim(filepath.Join(s.uploads, name)); err == nil {
			os.RemoveAll(trash)
		}
	}
}
