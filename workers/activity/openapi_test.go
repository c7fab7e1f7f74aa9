package activity_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
	"github.com/aviary-dev/aviary/workers/activity"
)

// openapiSchemas loads the components of the platform's description (as
// api/apitest does: AVIARY_OPENAPI_FILE, else the shared reference tree
// beside the checkout; workers may not import api). Without it the test
// is skipped, or fails under CI.
func openapiSchemas(t *testing.T) openapi3.Schemas {
	t.Helper()
	file := os.Getenv("AVIARY_OPENAPI_FILE")
	if file == "" {
		_, here, _, _ := runtime.Caller(0)
		file = filepath.Join(filepath.Dir(here), "..", "..", "..", "shared", "reference", "openapi", "x-api-v2-openapi-2.167.json")
	}
	if _, err := os.Stat(file); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the platform's OpenAPI description is not at %s (docs/openapi-conformance.md)", file)
		}
		t.Skipf("the platform's OpenAPI description is not at %s: set AVIARY_OPENAPI_FILE (docs/openapi-conformance.md)", file)
	}
	loader := openapi3.NewLoader()
	loader.Context = t.Context()
	doc, err := loader.LoadFromFile(file)
	if err != nil {
		t.Fatalf("load %s: %v", file, err)
	}
	return doc.Components.Schemas
}

// TestEnvelopesMatchOpenAPI renders a post.create, a post.delete, a
// like.create and profile updates (a string field and the verified badge)
// through the sink and checks each envelope against the description's
// ActivityStreamResponse. Its payload is a oneOf whose discriminator
// ("../event_type") names a property of the envelope, not of the payload,
// which a validator can not follow, so the payload is checked on its own
// against the schema the discriminator maps its event type to, and the
// rest of the envelope against ActivityStreamResponse without it.
func TestEnvelopesMatchOpenAPI(t *testing.T) {
	t.Parallel()
	schemas := openapiSchemas(t)
	ctx := context.Background()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	alice, bob := factory.User(t, db, nil), factory.User(t, db, nil)
	for _, s := range []struct {
		typ       string
		user      storage.User
		direction string
	}{{"post.create", alice, ""}, {"post.delete", alice, ""}, {"like.create", alice, "inbound"},
		{"profile.update.bio", alice, ""}, {"profile.update.verified_badge", alice, ""}} {
		factory.ActivitySubscriptionRow(t, db, storage.ActivitySubscription{AppID: app.ID, EventType: s.typ,
			FilterUserID: s.user.ID, Direction: s.direction, Tag: "t"})
	}
	post := factory.Post(t, db, &factory.PostOpts{Author: alice, Text: "a heron"})
	if _, err := db.Like(ctx, bob.ID, post.ID); err != nil {
		t.Fatal(err)
	}
	bio, on := "herons", true
	if _, _, err := db.UpdateUserProfile(ctx, alice.ID, postgres.ProfileUpdate{Bio: &bio, Verified: &on}); err != nil {
		t.Fatal(err)
	}
	pub := &publisher{}
	sink := &activity.Sink{Mode: activity.Stream, Store: db, Posts: &render.Hydrator{Store: db}, Bus: pub}
	handleAll := func(after int64) int64 {
		batch, err := db.EventsAfter(ctx, after, 500)
		if err != nil {
			t.Fatal(err)
		}
		if err := sink.Handle(ctx, batch); err != nil {
			t.Fatal(err)
		}
		return batch[len(batch)-1].Seq
	}
	last := handleAll(0)
	if _, err := db.DeletePost(ctx, post.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	handleAll(last)

	payloadOneOf := schemas["ActivityStreamingResponsePayload"].Value
	envelopeSchema := withoutPayload(t, schemas["ActivityStreamResponse"].Value)
	seen := map[string]bool{}
	for _, a := range pub.got {
		var env map[string]any
		if err := json.Unmarshal(a.Body, &env); err != nil {
			t.Fatal(err)
		}
		data, _ := env["data"].(map[string]any)
		typ, _ := data["event_type"].(string)
		seen[typ] = true
		ref, ok := payloadOneOf.Discriminator.Mapping[typ]
		if !ok {
			t.Errorf("event type %s: not in the description's payload mapping", typ)
			continue
		}
		payload, _ := data["payload"].(map[string]any)
		if typ == "like.create" {
			payload = likeAsDescribed(t, payload)
		}
		if err := schemas[filepath.Base(ref.Ref)].Value.VisitJSON(payload, openapi3.MultiErrors()); err != nil {
			t.Errorf("%s payload does not match %s: %v\nbody: %s", typ, ref.Ref, err, a.Body)
		}
		delete(data, "payload")
		if err := envelopeSchema.VisitJSON(env, openapi3.MultiErrors()); err != nil {
			t.Errorf("%s envelope does not match ActivityStreamResponse: %v\nbody: %s", typ, err, a.Body)
		}
	}
	for _, typ := range []string{"post.create", "post.delete", "like.create", "profile.update.bio", "profile.update.verified_badge"} {
		if !seen[typ] {
			t.Errorf("no %s envelope rendered (got %v)", typ, seen)
		}
	}
}

// withoutPayload is envelope (ActivityStreamResponse) with data.payload
// left out: the payload is checked on its own.
func withoutPayload(t *testing.T, envelope *openapi3.Schema) *openapi3.Schema {
	t.Helper()
	dataRef, ok := envelope.Properties["data"]
	if !ok || dataRef.Value == nil || dataRef.Value.Properties["payload"] == nil {
		t.Fatal("ActivityStreamResponse has no data.payload: the description changed")
	}
	data := *dataRef.Value
	data.Properties = openapi3.Schemas{}
	for k, v := range dataRef.Value.Properties {
		if k != "payload" {
			data.Properties[k] = v
		}
	}
	out := *envelope
	out.Properties = openapi3.Schemas{"data": &openapi3.SchemaRef{Value: &data}}
	for k, v := range envelope.Properties {
		if k != "data" {
			out.Properties[k] = v
		}
	}
	return &out
}

// likeAsDescribed is a like.create payload without timestamp_ms, after
// checking it is the decimal string the event-payloads page shows (the
// description's LikeWithPostAuthor has an int32 there, too small for a
// millisecond time; docs/activity.md). The page's liked_tweet_author_id,
// where the description has tweet_author_id, is an extra property the
// schema allows.
func likeAsDescribed(t *testing.T, payload map[string]any) map[string]any {
	t.Helper()
	ms, _ := payload["timestamp_ms"].(string)
	if _, err := strconv.ParseInt(ms, 10, 64); err != nil || payload["liked_tweet_author_id"] == nil {
		t.Errorf("like payload %v: want timestamp_ms a decimal string and liked_tweet_author_id", payload)
	}
	out := map[string]any{}
	for k, v := range payload {
		if k != "timestamp_ms" {
			out[k] = v
		}
	}
	return out
}
