package media

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// fuzzValidator is the validator the media module registers on.
func fuzzValidator() *validation.Validator {
	val := validation.New()
	val.MustRegisterEnum(enumCategory, storage.MediaCategories)
	val.MustRegisterEnum(enumType, storage.MediaTypes)
	registerRules(val)
	return val
}

// fuzzContentTypes are the request content types the targets send.
var fuzzContentTypes = []string{"application/json", "application/x-www-form-urlencoded", "text/plain", ""}

// FuzzInitialize reads POST /2/media/upload/initialize bodies (JSON or
// form) and checks that a refusal is a 4xx *apierr.Error, and that an
// accepted request names a type its category takes, a known category, a
// positive size and distinct well-formed owners; printed again as JSON it
// reads back to the same request.
func FuzzInitialize(f *testing.F) {
	for _, s := range []string{
		`{"media_type":"image/png","total_bytes":10}`,
		`{"media_type":"video/mp4","media_category":"tweet_video","total_bytes":1048576,"additional_owners":["2","3"],"shared":true}`,
		`{"media_type":"video/mp4","media_category":"tweet_image","total_bytes":10}`,
		`{"media_type":"image/png","total_bytes":0}`, `{"media_type":"image/png","total_bytes":-1}`,
		`{"media_type":"image/png","total_bytes":1e30}`, `{"media_type":"image/png","total_bytes":1.5}`,
		`{"media_type":"image/png","total_bytes":"10"}`, `{"media_type":"text/srt","media_category":"subtitles","total_bytes":5}`,
		`{"media_type":"image/png","total_bytes":1,"additional_owners":["2","02"]}`, `{"media_type":"image/png","total_bytes":1,"x":1}`,
		`{"media_type":"image/png","media_type":"image/gif","total_bytes":1}`, `[`, ``, `null`, `{"media_type":null}`,
		"media_type=image%2Fpng&total_bytes=10", "media_type=image/png&total_bytes=10&additional_owners=1,2",
		"media_type=image/png&total_bytes=x", "media_type=image/png&total_bytes=10&shared=yes",
	} {
		f.Add([]byte(s), byte(0))
		f.Add([]byte(s), byte(1))
	}
	val := fuzzValidator()
	f.Fuzz(func(t *testing.T, body []byte, ct byte) {
		req, err := bindInitialize(val, body, fuzzContentTypes[int(ct)%len(fuzzContentTypes)])
		if err != nil {
			checkClientError(t, body, err)
			return
		}
		category := categoryOf(req)
		if !slices.Contains(storage.MediaCategories, category) || !slices.Contains(storage.MediaTypesOf(category), req.MediaType) ||
			req.TotalBytes <= 0 || ownersProblem(req.AdditionalOwners) != nil {
			t.Fatalf("%q accepted as %+v (category %s)", body, req, category)
		}
		printed, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		again, err := bindInitialize(val, printed, "application/json")
		if err != nil || !sameInitialize(again, req) {
			t.Fatalf("%q accepted as %+v, printed as %s reads back as %+v, %v", body, req, printed, again, err)
		}
	})
}

func bindInitialize(val *validation.Validator, body []byte, contentType string) (initializeRequest, error) {
	r := httptest.NewRequest("POST", "/2/media/upload/initialize", bytes.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	var req initializeRequest
	err := httpx.Bind(r, val, &req)
	return req, err
}

func sameInitialize(a, b initializeRequest) bool {
	return a.MediaType == b.MediaType && a.MediaCategory == b.MediaCategory && a.TotalBytes == b.TotalBytes &&
		slices.Equal(a.AdditionalOwners, b.AdditionalOwners) && a.Shared == b.Shared
}

// checkClientError fails unless err is an *apierr.Error with a 4xx status.
func checkClientError(t *testing.T, input []byte, err error) {
	t.Helper()
	var e *apierr.Error
	if !errors.As(err, &e) || e.Status < 400 || e.Status > 499 {
		t.Fatalf("%q: error %T %v is not a 4xx *apierr.Error", input, err, err)
	}
}

// FuzzAppend reads JSON append bodies ({"media": base64, "segment_index":
// n}) and multipart segment_index fields, and checks that a refusal is a
// 4xx *apierr.Error and that an accepted segment has an index in [0,
// MediaMaxSegmentIndex] and bytes that encode back to the media sent. A
// multipart segment_index is taken exactly when it is the decimal a JSON
// number would print (no sign, no leading zero) and checkIndex's range
// is then the JSON append's.
func FuzzAppend(f *testing.F) {
	seg := base64.StdEncoding.EncodeToString([]byte("GIF89a\x01\x00"))
	for _, s := range []struct{ body, index string }{
		{`{"media":"` + seg + `","segment_index":0}`, "0"},
		{`{"media":"` + seg + `","segment_index":999}`, "999"},
		{`{"media":"` + seg + `","segment_index":1000}`, "1000"},
		{`{"media":"` + seg + `","segment_index":-1}`, "-1"},
		{`{"media":"` + seg + `","segment_index":1.0}`, "01"},
		{`{"media":"` + seg + `","segment_index":"1"}`, "+1"},
		{`{"media":"!!","segment_index":1}`, " 1"},
		{`{"media":"QQ","segment_index":1}`, "1 "},
		{`{"media":"","segment_index":1}`, ""},
		{`{"segment_index":1}`, "99999999999999999999"},
		{`{"media":"QQ==","segment_index":1e2}`, "١"},
		{`{"media":"QQ==","segment_index":null}`, "9223372036854775808"},
	} {
		f.Add([]byte(s.body), []byte(s.index))
	}
	val := fuzzValidator()
	f.Fuzz(func(t *testing.T, body, index []byte) {
		r := httptest.NewRequest("POST", "/2/media/upload/1/append", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		n, data, err := decodeAppend(r, val)
		if err != nil {
			checkClientError(t, body, err)
		} else {
			var sent struct{ Media string }
			if n < 0 || n > storage.MediaMaxSegmentIndex || json.Unmarshal(body, &sent) != nil ||
				base64.StdEncoding.EncodeToString(data) != sent.Media {
				t.Fatalf("%q accepted as segment %d of %q", body, n, data)
			}
		}
		checkFormIndex(t, index)
	})
}

// checkFormIndex checks parseIndex and checkIndex on a multipart field.
func checkFormIndex(t *testing.T, raw []byte) {
	t.Helper()
	n, err := parseIndex(raw)
	if err != nil {
		if canonical(raw) {
			if _, overflow := strconv.Atoi(string(raw)); overflow == nil {
				t.Fatalf("parseIndex(%q) refuses a decimal: %v", raw, err)
			}
		}
		return
	}
	if !canonical(raw) || strconv.Itoa(n) != string(raw) {
		t.Fatalf("parseIndex(%q) = %d", raw, n)
	}
	if err := checkIndex(n); err != nil {
		checkClientError(t, raw, err)
		if n >= 0 && n <= storage.MediaMaxSegmentIndex {
			t.Fatalf("checkIndex(%d) refuses it", n)
		}
	} else if n > storage.MediaMaxSegmentIndex {
		t.Fatalf("checkIndex(%d) takes it", n)
	}
}

// canonical reports whether raw is digits without a leading zero ("0"
// aside).
func canonical(raw []byte) bool {
	if len(raw) == 0 || (len(raw) > 1 && raw[0] == '0') {
		return false
	}
	for _, c := range raw {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// FuzzRecognise checks the one-shot upload's content sniffing: the media
// type it gives is one the category takes, and a refusal is a 4xx
// *apierr.Error; the additional_owners field splits into trimmed,
// non-empty ids.
func FuzzRecognise(f *testing.F) {
	for _, s := range []struct{ data, category, owners string }{
		{"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", storage.MediaTweetImage, "1, 2"},
		{"GIF89a\x01\x00\x01\x00", storage.MediaTweetGIF, ",,"},
		{"\xff\xd8\xff\xe0\x00\x10JFIF", storage.MediaTweetImage, ""},
		{"\x00\x00\x00\x18ftypmp42", storage.MediaTweetVideo, "1"},
		{"\x00\x00\x00\x14ftypqt  ", storage.MediaAmplifyVideo, " 3 "},
		{"WEBVTT\n\n00:00.000 --> 00:01.000\nhi", storage.MediaSubtitles, "x"},
		{"\xef\xbb\xbfWEBVTT", storage.MediaSubtitles, ""},
		{"II*\x00", storage.MediaTweetImage, ""}, {"", storage.MediaTweetImage, ""}, {"RIFF\x00\x00\x00\x00WEBPVP8 ", "nope", ""},
	} {
		f.Add([]byte(s.data), s.category, s.owners)
	}
	f.Fuzz(func(t *testing.T, data []byte, category, owners string) {
		mt, err := recognise(data, category)
		if err != nil {
			checkClientError(t, data, err)
		} else if !slices.Contains(storage.MediaTypesOf(category), mt) {
			t.Fatalf("recognise(%q, %s) = %s, not a type of the category", data, category, mt)
		}
		for _, id := range splitOwners(owners) {
			if id == "" || id != string(bytes.TrimSpace([]byte(id))) {
				t.Fatalf("splitOwners(%q) holds %q", owners, id)
			}
		}
	})
}
