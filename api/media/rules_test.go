package media

import (
	"reflect"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// TestInitializeRules: POST /2/media/upload/initialize's body rules answer
// in the platform's words.
func TestInitializeRules(t *testing.T) {
	val := validation.New()
	val.MustRegisterEnum(enumCategory, storage.MediaCategories)
	val.MustRegisterEnum(enumType, storage.MediaTypes)
	registerRules(val)
	many := make([]string, maxAdditionalOwners+1)
	for i := range many {
		many[i] = "1"
	}
	type want struct {
		field, message string
		values         []string
	}
	tests := []struct {
		name string
		req  initializeRequest
		want []want
	}{
		{"fine", initializeRequest{MediaType: "image/png", TotalBytes: 10, AdditionalOwners: []string{"2", "3"}}, nil},
		{"type the category does not take", initializeRequest{MediaType: "video/mp4", MediaCategory: "tweet_image", TotalBytes: 10},
			[]want{{"media_type", "The `media_type` field value [video/mp4] is not a type the media category tweet_image takes: [" + strings.Join(storage.MediaTypesOf("tweet_image"), ",") + "].", []string{"video/mp4"}}}},
		{"unknown category is the enum's", initializeRequest{MediaType: "image/png", MediaCategory: "nope", TotalBytes: 10},
			[]want{{"media_category", "The `media_category` field value [nope] is not one of [" + strings.Join(storage.MediaCategories, ",") + "]", []string{"nope"}}}},
		{"zero bytes", initializeRequest{MediaType: "image/png"},
			[]want{{"total_bytes", "The `total_bytes` field value [0] must be a positive integer: the size of the media in bytes.", []string{"0"}}}},
		{"too many owners", initializeRequest{MediaType: "image/png", TotalBytes: 1, AdditionalOwners: many},
			[]want{{"additional_owners", "The `additional_owners` field lists 101 users; at most 100 may be given.", []string{}}}},
		{"malformed owner", initializeRequest{MediaType: "image/png", TotalBytes: 1, AdditionalOwners: []string{"2", "x"}},
			[]want{{"additional_owners", "The `additional_owners` field value [x] does not match ^[0-9]{1,19}$.", []string{"x"}}}},
		{"repeated owner", initializeRequest{MediaType: "image/png", TotalBytes: 1, AdditionalOwners: []string{"2", "02"}},
			[]want{{"additional_owners", "The `additional_owners` field names user [02] more than once.", []string{"02"}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []want
			for _, e := range val.Struct(&tc.req) {
				got = append(got, want{e.Field, e.Message, e.Values})
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
