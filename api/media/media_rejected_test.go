package media_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestMediaRejected sends every bad input of docs/media-upload.md ("Bad
// input") and more: each is a Problem with the documented status and type
// naming the parameter, and stores nothing (no media row, no segment row,
// no segment object).
func TestMediaRejected(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	b.AddUser(t, "readonly", storage.AccessRead)
	ctx := context.Background()
	// The author's uploads: a 6 MiB video (room for a segment over 5 MiB),
	// a 10-byte photo, one finalized, one expired, one expired and removed,
	// two whose segments do not add up; and an upload of another user.
	upload := b.initMedia(t, "oauth:author", map[string]any{"media_type": "video/mp4", "total_bytes": 6 << 20})
	small := b.initMedia(t, "oauth:author", map[string]any{"media_type": "image/png", "total_bytes": 10})
	finalized := b.completeUpload(t, "oauth:author", []byte("done"))
	if r := b.Call(t, "POST", mediaBase+"/"+finalized+"/finalize", "oauth:author", "", nil); r.Status != 200 {
		t.Fatalf("finalize fixture: %d %s", r.Status, r.Raw)
	}
	expired := factory.Media(t, b.DB, &factory.MediaOpts{Owner: &b.Author, ExpiresAt: time.Now().Add(-time.Minute)})
	removed := factory.Media(t, b.DB, &factory.MediaOpts{Owner: &b.Author, ExpiresAt: time.Now().Add(-time.Minute)})
	if err := b.DB.DeleteExpiredUpload(ctx, removed.ID, time.Now(), func([]string) error { return nil }); err != nil {
		t.Fatalf("remove expired upload: %v", err)
	}
	gap := b.initMedia(t, "oauth:author", map[string]any{"media_type": "image/png", "total_bytes": 10})
	short := b.initMedia(t, "oauth:author", map[string]any{"media_type": "image/png", "total_bytes": 10})
	for _, seg := range []struct {
		id    string
		index int
	}{{gap, 0}, {gap, 2}, {short, 0}} {
		if r := b.send(t, mediaBase+"/"+seg.id+"/append", "oauth:author", appendJSON(seg.index, []byte("12345"))); r.Status != 200 {
			t.Fatalf("append fixture: %d %s", r.Status, r.Raw)
		}
	}
	other := b.initMedia(t, "oauth:reader", map[string]any{"media_type": "image/png", "total_bytes": 10})

	const (
		init      = mediaBase + "/initialize"
		invalid   = apitest.Problems + "invalid-request"
		notFound  = apitest.Problems + "resource-not-found"
		conflict  = apitest.Problems + "conflict"
		blank     = "about:blank"
		unsupAuth = apitest.Problems + "unsupported-authentication"
	)
	appendTo := func(id string) string { return mediaBase + "/" + id + "/append" }
	finalize := func(id string) string { return mediaBase + "/" + id + "/finalize" }
	status := func(query string) string { return mediaBase + "?" + query }
	png := func(extra map[string]any) payload {
		req := map[string]any{"media_type": "image/png", "total_bytes": 1024}
		for k, v := range extra {
			req[k] = v
		}
		return jsonPayload(req)
	}
	owners := make([]string, 101)
	for i := range owners {
		owners[i] = fmt.Sprint(i + 1)
	}
	reader, author := fmt.Sprint(b.User.ID), fmt.Sprint(b.Author.ID)
	gone := fmt.Sprint(b.AddUser(t, "gone", "read-write").ID)
	if _, err := apitest.DBConn(t, b.Bundle).Exec(t.Context(), `UPDATE users SET deleted_at = now() WHERE id = $1`, gone); err != nil {
		t.Fatal(err)
	}
	ok := appendJSON(0, []byte("1234"))
	overSegment := bytes.Repeat([]byte("v"), storage.MediaMaxSegment+1)
	tests := []struct {
		name, method, path, authz string
		in                        payload
		status                    int
		typ                       string
		params                    []string
		want                      string // a substring of the response; "" skips
	}{
		// initialize
		{"total_bytes zero", "POST", init, "oauth:author", png(map[string]any{"total_bytes": 0}), 400, invalid, []string{"total_bytes"}, "positive"},
		{"total_bytes negative", "POST", init, "oauth:author", png(map[string]any{"total_bytes": -5}), 400, invalid, []string{"total_bytes"}, "positive"},
		{"total_bytes missing", "POST", init, "oauth:author", jsonPayload(map[string]any{"media_type": "image/png"}), 400, invalid, []string{"total_bytes"}, ""},
		{"total_bytes not an integer", "POST", init, "oauth:author", png(map[string]any{"total_bytes": 1.5}), 400, invalid, []string{"total_bytes"}, ""},
		{"total_bytes a string", "POST", init, "oauth:author", png(map[string]any{"total_bytes": "1024"}), 400, invalid, []string{"total_bytes"}, ""},
		{"unknown category", "POST", init, "oauth:author", png(map[string]any{"media_category": "tweet_audio"}), 400, invalid, []string{"media_category"}, ""},
		{"unknown media_type", "POST", init, "oauth:author", png(map[string]any{"media_type": "image/heic"}), 400, invalid, []string{"media_type"}, ""},
		{"media_type missing", "POST", init, "oauth:author", jsonPayload(map[string]any{"total_bytes": 10}), 400, invalid, []string{"media_type"}, ""},
		{"media_type of another category", "POST", init, "oauth:author", png(map[string]any{"media_category": "tweet_video"}), 400, invalid, []string{"media_type"}, "tweet_video"},
		{"media_type no category takes", "POST", init, "oauth:author", png(map[string]any{"media_type": "model/gltf-binary"}), 400, invalid, []string{"media_type"}, ""},
		{"photo over 5 MiB", "POST", init, "oauth:author", png(map[string]any{"total_bytes": 5<<20 + 1}), 400, invalid, []string{"total_bytes"}, "5242880 bytes (5 MiB)"},
		{"GIF over 15 MiB", "POST", init, "oauth:author", png(map[string]any{"media_type": "image/gif", "total_bytes": 15<<20 + 1}), 400, invalid, []string{"total_bytes"}, "15 MiB"},
		{"video over what 1000 segments carry", "POST", init, "oauth:author", png(map[string]any{"media_type": "video/mp4", "total_bytes": 1000*(5<<20) + 1}), 400, invalid, []string{"total_bytes"}, "at most 1000 segments"},
		{"video over 8 GiB for a default user", "POST", init, "oauth:author", png(map[string]any{"media_type": "video/mp4", "total_bytes": 8<<30 + 1}), 400, invalid, []string{"total_bytes"}, "8 GiB"},
		{"DM video over 512 MiB", "POST", init, "oauth:author", png(map[string]any{"media_type": "video/mp4", "media_category": "dm_video", "total_bytes": 512<<20 + 1}), 400, invalid, []string{"total_bytes"}, "512 MiB"},
		{"additional owner not an id", "POST", init, "oauth:author", png(map[string]any{"additional_owners": []string{"bob"}}), 400, invalid, []string{"additional_owners"}, "bob"},
		{"additional owner a number", "POST", init, "oauth:author", png(map[string]any{"additional_owners": []int{5}}), 400, invalid, []string{"additional_owners"}, ""},
		{"101 additional owners", "POST", init, "oauth:author", png(map[string]any{"additional_owners": owners}), 400, invalid, []string{"additional_owners"}, "at most 100"},
		{"additional owner not a user", "POST", init, "oauth:author", png(map[string]any{"additional_owners": []string{"999999999999"}}), 400, invalid, []string{"additional_owners"}, "not a user"},
		{"additional owner deleted", "POST", init, "oauth:author", png(map[string]any{"additional_owners": []string{gone}}), 400, invalid, []string{"additional_owners"}, "not a user"},
		{"additional owner twice", "POST", init, "oauth:author", png(map[string]any{"additional_owners": []string{reader, reader}}), 400, invalid, []string{"additional_owners"}, "more than once"},
		{"uploader as additional owner", "POST", init, "oauth:author", png(map[string]any{"additional_owners": []string{author}}), 400, invalid, []string{"additional_owners"}, "uploader"},
		{"initialize unknown field", "POST", init, "oauth:author", png(map[string]any{"command": "INIT"}), 400, invalid, []string{"command"}, ""},
		{"initialize as a form", "POST", init, "oauth:author", payload{"application/x-www-form-urlencoded", []byte("media_type=image/png&total_bytes=10")}, 415, blank, nil, ""},
		{"initialize body over 1 MiB", "POST", init, "oauth:author", png(map[string]any{"shared": false, "pad": strings.Repeat("p", 1<<20)}), 413, blank, nil, ""},
		{"initialize with a bearer token", "POST", init, b.Bearer, png(nil), 403, unsupAuth, nil, ""},
		{"initialize with a read-only token", "POST", init, "oauth:readonly", png(nil), 403, blank, nil, ""},
		// append
		{"append to an unknown id", "POST", appendTo("42"), "oauth:author", ok, 404, notFound, nil, `Could not find media with id: [42].`},
		{"append to another user's upload", "POST", appendTo(other), "oauth:author", ok, 404, notFound, nil, `Could not find media with id: [` + other + `].`},
		{"append to a removed expired upload", "POST", appendTo(fmt.Sprint(removed.ID)), "oauth:author", ok, 404, notFound, nil, `"parameter":"id"`},
		{"append to a malformed id", "POST", appendTo("12ab"), "oauth:author", ok, 400, invalid, []string{"id"}, ""},
		{"append after finalize", "POST", appendTo(finalized), "oauth:author", ok, 409, conflict, nil, "already finalized"},
		{"append to an expired upload", "POST", appendTo(fmt.Sprint(expired.ID)), "oauth:author", ok, 409, conflict, nil, "expired"},
		{"bad base64", "POST", appendTo(small), "oauth:author", jsonPayload(map[string]any{"media": "not base64!", "segment_index": 0}), 400, invalid, []string{"media"}, "base64"},
		{"segment_index -1", "POST", appendTo(small), "oauth:author", appendJSON(-1, []byte("1")), 400, invalid, []string{"segment_index"}, "between 0 and 999"},
		{"segment_index 1000", "POST", appendTo(small), "oauth:author", form(indexField(1000), mediaFile([]byte("1"))), 400, invalid, []string{"segment_index"}, "between 0 and 999"},
		{"segment_index 1000 after the media", "POST", appendTo(small), "oauth:author", form(mediaFile([]byte("1")), indexField(1000)), 400, invalid, []string{"segment_index"}, ""},
		{"segment_index not an integer", "POST", appendTo(small), "oauth:author", form(formField{name: "segment_index", value: "one"}, mediaFile([]byte("1"))), 400, invalid, []string{"segment_index"}, "not an integer"},
		{"segment_index with a sign", "POST", appendTo(small), "oauth:author", form(formField{name: "segment_index", value: "+4"}, mediaFile([]byte("1"))), 400, invalid, []string{"segment_index"}, "not an integer"},
		{"segment_index with leading zeros", "POST", appendTo(small), "oauth:author", form(formField{name: "segment_index", value: "007"}, mediaFile([]byte("1"))), 400, invalid, []string{"segment_index"}, "not an integer"},
		{"segment_index -0", "POST", appendTo(small), "oauth:author", form(formField{name: "segment_index", value: "-0"}, mediaFile([]byte("1"))), 400, invalid, []string{"segment_index"}, "not an integer"},
		{"path id not a number", "POST", "/2/media/upload/12a/append", "oauth:author", appendJSON(0, []byte("1")), 400, invalid, []string{"id"}, "The `id` path parameter value [12a]"},
		{"segment_index a JSON string", "POST", appendTo(small), "oauth:author", jsonPayload(map[string]any{"media": "MQ==", "segment_index": "0"}), 400, invalid, []string{"segment_index"}, ""},
		{"segment_index missing (JSON)", "POST", appendTo(small), "oauth:author", jsonPayload(map[string]any{"media": "MQ=="}), 400, invalid, []string{"segment_index"}, ""},
		{"segment_index missing (multipart)", "POST", appendTo(small), "oauth:author", form(mediaFile([]byte("1"))), 400, invalid, []string{"segment_index"}, "required"},
		{"no media (JSON)", "POST", appendTo(small), "oauth:author", jsonPayload(map[string]any{"segment_index": 0}), 400, invalid, []string{"media"}, ""},
		{"no media (multipart)", "POST", appendTo(small), "oauth:author", form(indexField(0)), 400, invalid, []string{"media"}, "required"},
		{"empty segment (JSON)", "POST", appendTo(small), "oauth:author", jsonPayload(map[string]any{"media": "", "segment_index": 0}), 400, invalid, []string{"media"}, ""},
		{"empty segment (multipart)", "POST", appendTo(small), "oauth:author", form(indexField(0), mediaFile(nil)), 400, invalid, []string{"media"}, "empty"},
		{"segment over 5 MiB (multipart)", "POST", appendTo(upload), "oauth:author", form(indexField(0), mediaFile(overSegment)), 400, invalid, []string{"media"}, "5242880 bytes"},
		{"segment over 5 MiB (JSON)", "POST", appendTo(upload), "oauth:author", appendJSON(0, overSegment), 400, invalid, []string{"media"}, "5242880 bytes"},
		{"segment over total_bytes (multipart)", "POST", appendTo(small), "oauth:author", form(mediaField([]byte("12345678901")), indexField(0)), 400, invalid, []string{"media"}, "total_bytes (10)"},
		{"segment over total_bytes (JSON)", "POST", appendTo(small), "oauth:author", appendJSON(0, []byte("12345678901")), 400, invalid, []string{"media"}, "total_bytes (10)"},
		{"media twice", "POST", appendTo(small), "oauth:author", form(indexField(0), mediaFile([]byte("1")), mediaFile([]byte("2"))), 400, invalid, []string{"media"}, "only once"},
		{"unknown multipart field", "POST", appendTo(small), "oauth:author", form(mediaFile([]byte("1")), indexField(0), formField{name: "command", value: "APPEND"}), 400, invalid, []string{"command"}, ""},
		{"unknown JSON field", "POST", appendTo(small), "oauth:author", jsonPayload(map[string]any{"media": "MQ==", "segment_index": 0, "media_id": small}), 400, invalid, []string{"media_id"}, ""},
		{"multipart without a boundary", "POST", appendTo(small), "oauth:author", payload{"multipart/form-data", []byte("x")}, 400, invalid, []string{"body"}, ""},
		{"truncated multipart body", "POST", appendTo(small), "oauth:author", truncated(form(indexField(0), mediaFile([]byte("12345")))), 400, invalid, []string{"body"}, ""},
		{"append body over 8 MiB", "POST", appendTo(upload), "oauth:author", appendJSON(0, bytes.Repeat([]byte("v"), 7<<20)), 413, blank, nil, ""},
		{"multipart body over 8 MiB", "POST", appendTo(upload), "oauth:author", form(indexField(0), mediaFile(bytes.Repeat([]byte("v"), 9<<20))), 413, blank, nil, "8388608 bytes"},
		{"append as text", "POST", appendTo(small), "oauth:author", payload{"text/plain", []byte("1")}, 415, blank, nil, ""},
		{"append with a bearer token", "POST", appendTo(small), b.Bearer, ok, 403, unsupAuth, nil, ""},
		// finalize
		{"finalize an unknown id", "POST", finalize("42"), "oauth:author", payload{}, 404, notFound, nil, `"parameter":"id"`},
		{"finalize another user's upload", "POST", finalize(other), "oauth:author", payload{}, 404, notFound, nil, `Could not find media with id: [` + other + `].`},
		{"finalize twice", "POST", finalize(finalized), "oauth:author", payload{}, 409, conflict, nil, "already finalized"},
		{"finalize an expired upload", "POST", finalize(fmt.Sprint(expired.ID)), "oauth:author", payload{}, 409, conflict, nil, "expired"},
		{"finalize with a gap", "POST", finalize(gap), "oauth:author", payload{}, 400, invalid, []string{"segment_index"}, "segments [1] are missing"},
		{"finalize short of total_bytes", "POST", finalize(short), "oauth:author", payload{}, 400, invalid, []string{"total_bytes"}, "received 5 bytes, but total_bytes is 10"},
		{"finalize with a read-only token", "POST", finalize(small), "oauth:readonly", payload{}, 403, blank, nil, ""},
		// STATUS
		{"STATUS without media_id", "GET", status("command=STATUS"), "oauth:author", payload{}, 400, invalid, []string{"media_id"}, ""},
		{"STATUS of a malformed id", "GET", status("command=STATUS&media_id=x1"), "oauth:author", payload{}, 400, invalid, []string{"media_id"}, ""},
		{"STATUS with another command", "GET", status("command=INIT&media_id=" + finalized), "oauth:author", payload{}, 400, invalid, []string{"command"}, ""},
		{"STATUS with an unknown parameter", "GET", status("command=STATUS&media_id=" + finalized + "&segment_index=1"), "oauth:author", payload{}, 400, invalid, []string{"segment_index"}, ""},
		{"STATUS of an unknown id", "GET", status("command=STATUS&media_id=42"), "oauth:author", payload{}, 404, notFound, nil, `"parameter":"media_id"`},
		{"STATUS of another user's media", "GET", status("command=STATUS&media_id=" + finalized), "oauth:reader", payload{}, 404, notFound, nil, `Could not find media with media_id: [` + finalized + `].`},
		{"STATUS before finalize", "GET", status("command=STATUS&media_id=" + small), "oauth:author", payload{}, 409, conflict, nil, "finalize it first"},
		{"STATUS with a bearer token", "GET", status("command=STATUS&media_id=" + finalized), b.Bearer, payload{}, 403, unsupAuth, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := b.mediaState(t)
			r := b.Call(t, tt.method, tt.path, tt.authz, tt.in.ctype, tt.in.body)
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %.1000s", r.Status, tt.status, r.Raw)
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Fatalf("content type %q: %.1000s", ct, r.Raw)
			}
			if r.Body["type"] != tt.typ || r.Body["status"] != float64(tt.status) {
				t.Fatalf("problem %.1000s; want type %s", r.Raw, tt.typ)
			}
			if got := apitest.ParamNames(r.Body); strings.Join(got, ",") != strings.Join(tt.params, ",") {
				t.Errorf("parameters %v, want %v: %.1000s", got, tt.params, r.Raw)
			}
			if !strings.Contains(r.Raw, tt.want) {
				t.Errorf("answer %.1000s does not mention %q", r.Raw, tt.want)
			}
			if after := b.mediaState(t); after != before {
				t.Errorf("a refused request stored something: %+v -> %+v", before, after)
			}
		})
	}
	// The refused appends left the uploads as they were.
	for _, id := range []string{upload, small} {
		if segs, err := b.DB.MediaSegments(ctx, apitest.MustID(t, id)); err != nil || len(segs) != 0 {
			t.Errorf("upload %s has segments %+v %v", id, segs, err)
		}
	}
}

// truncated cuts p's body before its closing boundary.
func truncated(p payload) payload {
	return payload{p.ctype, p.body[:len(p.body)-10]}
}

// TestMediaAppendBase64: JSON segments are standard base64 with padding;
// the decoded bytes are what is stored.
func TestMediaAppendBase64(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	data := []byte{0xfb, 0xff, 0xbf, 'a', 'b'} // "+/+/YWI=": both alphabets differ
	tests := []struct {
		name    string
		encoded string
		status  int
	}{
		{"padded", base64.StdEncoding.EncodeToString(data), 200},
		{"URL alphabet", base64.URLEncoding.EncodeToString(data), 400},
		{"unpadded", base64.RawStdEncoding.EncodeToString(data), 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := b.initMedia(t, "oauth:author", map[string]any{"media_type": "image/png", "total_bytes": len(data)})
			r := b.send(t, mediaBase+"/"+id+"/append", "oauth:author", jsonPayload(map[string]any{"media": tt.encoded, "segment_index": 0}))
			if r.Status != tt.status {
				t.Fatalf("append %q: %d %s", tt.encoded, r.Status, r.Raw)
			}
			if tt.status == 200 {
				checkSegments(t, b, apitest.MustID(t, id), string(data), 1)
			}
		})
	}
}
