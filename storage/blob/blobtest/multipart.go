package blobtest

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/storage/blob"
)

// multipartTests are the blob.Multiparter contract; Exercise runs them on
// every store and skips them for stores without the capability.
var multipartTests = []struct {
	name string
	run  func(t *testing.T, s blob.Store, mp blob.Multiparter)
}{
	{"MultipartRoundTrip", testMultipartRoundTrip},
	{"MultipartOutOfOrder", testMultipartOutOfOrder},
	{"MultipartReplacePart", testMultipartReplacePart},
	{"MultipartInvalidComplete", testMultipartInvalidComplete},
	{"MultipartInvalidPart", testMultipartInvalidPart},
	{"MultipartAbort", testMultipartAbort},
	{"MultipartReplacesObject", testMultipartReplacesObject},
	{"MultipartUnknownUpload", testMultipartUnknownUpload},
	{"MultipartInvalidKey", testMultipartInvalidKey},
}

// withMultiparter adapts a multipart test to a store that may lack the
// capability.
func withMultiparter(run func(*testing.T, blob.Store, blob.Multiparter)) func(*testing.T, blob.Store) {
	return func(t *testing.T, s blob.Store) {
		mp, ok := s.(blob.Multiparter)
		if !ok {
			t.Skipf("%T does not implement blob.Multiparter", s)
		}
		run(t, s, mp)
	}
}

// createUpload starts an upload or fails the test.
func createUpload(t *testing.T, mp blob.Multiparter, key, contentType string) string {
	t.Helper()
	id, err := mp.CreateMultipart(t.Context(), key, contentType)
	if err != nil || id == "" {
		t.Fatalf("CreateMultipart(%q) = %q, %v; want an upload id", key, id, err)
	}
	return id
}

// uploadPart uploads data as a non-seekable stream, of unknown size if
// unknownSize, and checks the returned Part.
func uploadPart(t *testing.T, mp blob.Multiparter, key, id string, number int, data []byte, unknownSize bool) blob.Part {
	t.Helper()
	size := int64(len(data))
	if unknownSize {
		size = -1
	}
	p, err := mp.UploadPart(t.Context(), key, id, number, onlyReader{bytes.NewReader(data)}, size)
	if err != nil {
		t.Fatalf("UploadPart(%q, part %d): %v", key, number, err)
	}
	if p.Number != number || p.Size != int64(len(data)) || p.ETag == "" {
		t.Fatalf("UploadPart(%q, part %d) = %+v, want number %d, size %d and an ETag", key, number, p, number, len(data))
	}
	return p
}

// listParts lists an upload's parts or fails the test.
func listParts(t *testing.T, mp blob.Multiparter, key, id string) []blob.Part {
	t.Helper()
	parts, err := mp.ListParts(t.Context(), key, id)
	if err != nil {
		t.Fatalf("ListParts(%q): %v", key, err)
	}
	return parts
}

// complete completes an upload or fails the test.
func complete(t *testing.T, mp blob.Multiparter, key, id string, parts []blob.Part) blob.Info {
	t.Helper()
	info, err := mp.CompleteMultipart(t.Context(), key, id, parts)
	if err != nil {
		t.Fatalf("CompleteMultipart(%q, %d parts): %v", key, len(parts), err)
	}
	return info
}

// randomBytes returns n deterministic pseudo-random bytes.
func randomBytes(seed byte, n int) []byte {
	b, _ := io.ReadAll(randomReader(seed, int64(n)))
	return b
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: err = %v, want errors.Is(err, %v)", what, err, target)
	}
}

// testMultipartRoundTrip uploads a minimum-size part and a small last one
// (of unknown size), and checks the object only appears on completion.
func testMultipartRoundTrip(t *testing.T, s blob.Store, mp blob.Multiparter) {
	const key = "media/1/video.mp4"
	id := createUpload(t, mp, key, "video/mp4")
	first, last := randomBytes(1, blob.MinPartSize), randomBytes(2, 1000)
	p1 := uploadPart(t, mp, key, id, 1, first, false)
	p2 := uploadPart(t, mp, key, id, 2, last, true)
	_, err := s.Stat(t.Context(), key)
	wantNotFound(t, "Stat before CompleteMultipart", err)
	if got := listParts(t, mp, key, id); !slices.Equal(got, []blob.Part{p1, p2}) {
		t.Errorf("ListParts = %+v, want %+v", got, []blob.Part{p1, p2})
	}
	info := complete(t, mp, key, id, []blob.Part{p1, p2})
	want := slices.Concat(first, last)
	checkInfo(t, "CompleteMultipart info", info, key, int64(len(want)), "video/mp4")
	got, info := Read(t, s, key)
	checkInfo(t, "Get info", info, key, int64(len(want)), "video/mp4")
	if !bytes.Equal(got, want) {
		t.Errorf("Get = %d bytes %q, want %d bytes %q", len(got), clip(got), len(want), clip(want))
	}
	_, err = mp.ListParts(t.Context(), key, id)
	wantErr(t, "ListParts after CompleteMultipart", err, blob.ErrUploadNotFound)
	_, err = mp.UploadPart(t.Context(), key, id, 3, strings.NewReader("late"), 4)
	wantErr(t, "UploadPart after CompleteMultipart", err, blob.ErrUploadNotFound)
}

// testMultipartOutOfOrder uploads the last part first, with a gap in the
// numbers, and completes them in order.
func testMultipartOutOfOrder(t *testing.T, s blob.Store, mp blob.Multiparter) {
	const key = "media/2/out-of-order"
	id := createUpload(t, mp, key, "")
	first, last := randomBytes(3, blob.MinPartSize+17), []byte("the end")
	p3 := uploadPart(t, mp, key, id, 3, last, false)
	p1 := uploadPart(t, mp, key, id, 1, first, true)
	if got := listParts(t, mp, key, id); !slices.Equal(got, []blob.Part{p1, p3}) {
		t.Fatalf("ListParts = %+v, want %+v", got, []blob.Part{p1, p3})
	}
	_, err := mp.CompleteMultipart(t.Context(), key, id, []blob.Part{p3, p1})
	wantErr(t, "CompleteMultipart with parts out of order", err, blob.ErrInvalidPart)
	info := complete(t, mp, key, id, []blob.Part{p1, p3})
	checkInfo(t, "CompleteMultipart info", info, key, int64(len(first)+len(last)), blob.DefaultContentType)
	mustEqual(t, s, key, slices.Concat(first, last))
}

// testMultipartReplacePart uploads part 1 twice: the second upload wins.
func testMultipartReplacePart(t *testing.T, s blob.Store, mp blob.Multiparter) {
	const key = "media/3/replaced"
	id := createUpload(t, mp, key, "text/plain")
	old := uploadPart(t, mp, key, id, 1, []byte("first version"), false)
	p := uploadPart(t, mp, key, id, 1, []byte("second, longer version"), true)
	if got := listParts(t, mp, key, id); !slices.Equal(got, []blob.Part{p}) {
		t.Fatalf("ListParts after re-upload = %+v, want %+v", got, []blob.Part{p})
	}
	if old.ETag != p.ETag {
		_, err := mp.CompleteMultipart(t.Context(), key, id, []blob.Part{old})
		wantErr(t, "CompleteMultipart with the replaced part's ETag", err, blob.ErrInvalidPart)
	}
	complete(t, mp, key, id, []blob.Part{p})
	mustEqual(t, s, key, []byte("second, longer version"))
}

// testMultipartInvalidComplete checks refused part lists create no object
// and leave the upload open.
func testMultipartInvalidComplete(t *testing.T, s blob.Store, mp blob.Multiparter) {
	const key = "media/4/invalid"
	id := createUpload(t, mp, key, "")
	small1 := uploadPart(t, mp, key, id, 1, []byte("small part one"), false)
	small2 := uploadPart(t, mp, key, id, 2, []byte("small part two"), false)
	wrongETag := small1
	wrongETag.ETag = `"0123456789abcdef0123456789abcdef"`
	missing := blob.Part{Number: 3, ETag: small1.ETag, Size: small1.Size}
	lists := map[string][]blob.Part{
		"wrong ETag":                 {wrongETag},
		"no ETag":                    {{Number: 1}},
		"part not uploaded":          {missing},
		"non-last part too small":    {small1, small2},
		"no parts":                   {},
		"duplicate part":             {small1, small1},
		"descending parts":           {small2, small1},
		"part number 0":              {{Number: 0, ETag: small1.ETag}},
		"part number over the max":   {{Number: blob.MaxPartNumber + 1, ETag: small1.ETag}},
		"valid part, then wrong one": {small1, {Number: 2, ETag: small1.ETag}},
	}
	for name, parts := range lists {
		_, err := mp.CompleteMultipart(t.Context(), key, id, parts)
		wantErr(t, "CompleteMultipart("+name+")", err, blob.ErrInvalidPart)
	}
	_, err := s.Stat(t.Context(), key)
	wantNotFound(t, "Stat after refused CompleteMultipart", err)
	if got := listParts(t, mp, key, id); !slices.Equal(got, []blob.Part{small1, small2}) {
		t.Errorf("ListParts after refused CompleteMultipart = %+v, want %+v", got, []blob.Part{small1, small2})
	}
	complete(t, mp, key, id, []blob.Part{small2})
	mustEqual(t, s, key, []byte("small part two"))
}

// testMultipartInvalidPart checks UploadPart's refusals.
func testMultipartInvalidPart(t *testing.T, s blob.Store, mp blob.Multiparter) {
	const key = "media/5/parts"
	id := createUpload(t, mp, key, "")
	for _, n := range []int{-1, 0, blob.MaxPartNumber + 1} {
		_, err := mp.UploadPart(t.Context(), key, id, n, strings.NewReader("x"), 1)
		wantErr(t, "UploadPart(part number "+strconv.Itoa(n)+")", err, blob.ErrInvalidPart)
	}
	_, err := mp.UploadPart(t.Context(), key, id, 1, strings.NewReader("x"), blob.MaxPartSize+1)
	wantErr(t, "UploadPart(size over MaxPartSize)", err, blob.ErrInvalidPart)
	if _, err := mp.UploadPart(t.Context(), key, id, 1, onlyReader{strings.NewReader("short")}, 100); err == nil {
		t.Error("UploadPart with a body shorter than its size succeeded")
	}
	if _, err := mp.UploadPart(t.Context(), key, id, 2, &failingReader{n: 1000}, -1); err == nil {
		t.Error("UploadPart with a failing body succeeded")
	}
	if got := listParts(t, mp, key, id); len(got) != 0 {
		t.Errorf("ListParts after refused parts = %+v, want none", got)
	}
	p := uploadPart(t, mp, key, id, blob.MaxPartNumber, []byte("last possible part"), false)
	if got := listParts(t, mp, key, id); !slices.Equal(got, []blob.Part{p}) {
		t.Errorf("ListParts = %+v, want %+v", got, []blob.Part{p})
	}
}

// testMultipartAbort checks an aborted upload is gone for every method.
func testMultipartAbort(t *testing.T, s blob.Store, mp blob.Multiparter) {
	const key = "media/6/aborted"
	id := createUpload(t, mp, key, "")
	p := uploadPart(t, mp, key, id, 1, []byte("discarded"), false)
	if err := mp.AbortMultipart(t.Context(), key, id); err != nil {
		t.Fatalf("AbortMultipart: %v", err)
	}
	for method, err := range callMultipart(t, mp, key, id, p) {
		wantErr(t, method+" after AbortMultipart", err, blob.ErrUploadNotFound)
	}
	_, err := s.Stat(t.Context(), key)
	wantNotFound(t, "Stat after AbortMultipart", err)
}

// callMultipart calls every Multiparter method on an existing upload (but
// CreateMultipart) and returns their errors; part is used to complete.
func callMultipart(t *testing.T, mp blob.Multiparter, key, id string, part blob.Part) map[string]error {
	ctx := t.Context()
	_, uploadErr := mp.UploadPart(ctx, key, id, 1, strings.NewReader("x"), 1)
	_, listErr := mp.ListParts(ctx, key, id)
	_, completeErr := mp.CompleteMultipart(ctx, key, id, []blob.Part{part})
	return map[string]error{
		"UploadPart":        uploadErr,
		"ListParts":         listErr,
		"CompleteMultipart": completeErr,
		"AbortMultipart":    mp.AbortMultipart(ctx, key, id),
	}
}

// testMultipartReplacesObject completes an upload over an existing object
// while a reader checks it only ever sees one whole version.
func testMultipartReplacesObject(t *testing.T, s blob.Store, mp blob.Multiparter) {
	const key = "media/7/replaced"
	old := []byte("the previous object")
	put(t, s, key, old, "text/plain")
	id := createUpload(t, mp, key, "application/octet-stream")
	first, last := randomBytes(4, blob.MinPartSize), randomBytes(5, 4096)
	parts := []blob.Part{uploadPart(t, mp, key, id, 1, first, false), uploadPart(t, mp, key, id, 2, last, false)}
	mustEqual(t, s, key, old)
	versions := [][]byte{old, slices.Concat(first, last)}
	done := make(chan struct{})
	reader := make(chan struct{})
	go func() {
		defer close(reader)
		for {
			checkWholeVersion(t, s, key, versions)
			select {
			case <-done:
				return
			default:
			}
		}
	}()
	info := complete(t, mp, key, id, parts)
	close(done)
	<-reader
	checkInfo(t, "CompleteMultipart info", info, key, int64(len(versions[1])), "application/octet-stream")
	mustEqual(t, s, key, versions[1])
}

// testMultipartUnknownUpload uses ids that name no upload of the key.
func testMultipartUnknownUpload(t *testing.T, s blob.Store, mp blob.Multiparter) {
	const key = "media/8/unknown"
	other := createUpload(t, mp, "media/8/other", "")
	p := uploadPart(t, mp, "media/8/other", other, 1, []byte("other's part"), false)
	ids := map[string]string{
		"made up":            "no-such-upload",
		"empty":              "",
		"path traversal":     "../../objects/x",
		"hex like a real id": "0123456789abcdef0123456789abcdef",
		"another key's":      other,
	}
	for name, id := range ids {
		for method, err := range callMultipart(t, mp, key, id, p) {
			wantErr(t, method+"(upload id "+name+")", err, blob.ErrUploadNotFound)
		}
	}
	if got := listParts(t, mp, "media/8/other", other); !slices.Equal(got, []blob.Part{p}) {
		t.Errorf("ListParts of the other key's upload = %+v, want %+v", got, []blob.Part{p})
	}
	_, err := s.Stat(t.Context(), key)
	wantNotFound(t, "Stat", err)
}

// testMultipartInvalidKey checks every method rejects invalid keys.
func testMultipartInvalidKey(t *testing.T, s blob.Store, mp blob.Multiparter) {
	id := createUpload(t, mp, "valid/key", "")
	part := blob.Part{Number: 1, ETag: `"0123456789abcdef0123456789abcdef"`, Size: 1}
	for name, key := range invalidKeys {
		_, err := mp.CreateMultipart(t.Context(), key, "")
		wantErr(t, "CreateMultipart(key "+name+")", err, blob.ErrInvalidKey)
		for method, err := range callMultipart(t, mp, key, id, part) {
			wantErr(t, method+"(key "+name+")", err, blob.ErrInvalidKey)
		}
	}
}
