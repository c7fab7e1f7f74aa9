package httpx

import (
	"errors"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
)

// TestQueryGetters: each getter parses its parameter, records what is
// wrong with it, and Err answers every problem at once in the order the
// getters ran, or a missing required parameter alone.
func TestQueryGetters(t *testing.T) {
	type problem struct{ param, message string }
	tests := []struct {
		name  string
		query string
		read  func(q *Query) any
		want  any
		errs  []problem // nil: no error
		alone bool      // the error is a missing parameter
	}{
		{"required present", "type=a", func(q *Query) any { return q.Required("type") }, "a", nil, false},
		{"required absent", "x=1", func(q *Query) any { return q.Required("type") }, "", []problem{{"type", "The `type` query parameter can not be empty"}}, true},
		{"required empty", "type=", func(q *Query) any { return q.Required("type") }, "", []problem{{"type", "The `type` query parameter can not be empty"}}, true},
		{"invalid UTF-8", "type=%ff", func(q *Query) any { return q.Required("type") }, "", []problem{{"type", "The `type` query parameter value must be valid UTF-8"}}, false},
		{"id", "since_id=42", func(q *Query) any { return q.ID("since_id") }, int64(42), nil, false},
		{"id absent", "", func(q *Query) any { return q.ID("since_id") }, int64(0), nil, false},
		{"id malformed", "since_id=4x", func(q *Query) any { return q.ID("since_id") }, int64(0), []problem{{"since_id", "The `since_id` query parameter value [4x] does not match ^[0-9]{1,19}$"}}, false},
		{"id zero", "since_id=0", func(q *Query) any { return q.ID("since_id") }, int64(0), []problem{{"since_id", "The `since_id` query parameter value [0] does not match ^[0-9]{1,19}$"}}, false},
		{"required id absent", "", func(q *Query) any { return q.RequiredID("media_id") }, int64(0), []problem{{"media_id", "The `media_id` query parameter can not be empty"}}, true},
		{"int default", "", func(q *Query) any { return q.Int("max_results", 10, 100, 10) }, 10, nil, false},
		{"int in range", "max_results=100", func(q *Query) any { return q.Int("max_results", 10, 100, 10) }, 100, nil, false},
		{"int over", "max_results=101", func(q *Query) any { return q.Int("max_results", 10, 100, 10) }, 101, []problem{{"max_results", "The `max_results` query parameter value [101] is not between 10 and 100"}}, false},
		{"int signed", "max_results=%2B20", func(q *Query) any { return q.Int("max_results", 10, 100, 10) }, 20, []problem{{"max_results", "The `max_results` query parameter value [+20] is not between 10 and 100"}}, false},
		{"enum default", "", func(q *Query) any { return q.Enum("sort_order", []string{"recency", "relevancy"}, "recency") }, "recency", nil, false},
		{"enum bad", "sort_order=x", func(q *Query) any { return q.Enum("sort_order", []string{"recency", "relevancy"}, "recency") }, "x", []problem{{"sort_order", "The `sort_order` query parameter value [x] is not one of [recency,relevancy]"}}, false},
		{"enum empty is checked", "sort_order=", func(q *Query) any { return q.Enum("sort_order", []string{"recency"}, "recency") }, "", []problem{{"sort_order", "The `sort_order` query parameter value [] is not one of [recency]"}}, false},
		{"required enum absent", "", func(q *Query) any { return q.RequiredEnum("type", []string{"a"}) }, "", []problem{{"type", "The `type` query parameter can not be empty"}}, true},
		{"time", "start_time=2026-01-02T03:04:05%2B01:00", func(q *Query) any { t, _ := q.Time("start_time"); return t }, time.Date(2026, 1, 2, 2, 4, 5, 0, time.UTC), nil, false},
		{"time malformed", "start_time=yesterday", func(q *Query) any { _, ok := q.Time("start_time"); return ok }, false, []problem{{"start_time", "The `start_time` query parameter value [yesterday] is not a valid RFC 3339 time (YYYY-MM-DDTHH:mm:ssZ)"}}, false},
		{"list", "x.fields=b,a", func(q *Query) any { return q.List("x.fields", []string{"a", "b"}) }, []string{"b", "a"}, nil, false},
		{"list absent", "", func(q *Query) any { return q.List("x.fields", []string{"a"}) }, []string(nil), nil, false},
		{"list bad and repeated", "x.fields=a,z,a", func(q *Query) any { return q.List("x.fields", []string{"a"}) }, []string{"a"},
			[]problem{{"x.fields", "The `x.fields` query parameter value [z] is not one of [a]"}, {"x.fields", "The `x.fields` query parameter value [a] is duplicated"}}, false},
		{"ids in order, repeats once", "ids=3,1,3", func(q *Query) any { return q.IDs("ids", 3, "ids") }, []int64{3, 1}, nil, false},
		{"ids too many", "ids=1,2,3,4", func(q *Query) any { return q.IDs("ids", 3, "ids") }, []int64{}, []problem{{"ids", "The `ids` query parameter lists 4 ids; the most is 3."}}, false},
		{"ids every malformed one", "ids=1,x,,2", func(q *Query) any { return q.IDs("ids", 5, "items") }, []int64{1, 2},
			[]problem{{"ids", "The `ids` query parameter value [x] does not match ^[0-9]{1,19}$"}, {"ids", "The `ids` query parameter value [] does not match ^[0-9]{1,19}$"}}, false},
		{"ids missing", "", func(q *Query) any { return q.IDs("ids", 5, "items") }, []int64{}, []problem{{"ids", "The `ids` query parameter can not be empty"}}, true},
		{"problems in getter order, missing answered alone", "max_results=1", func(q *Query) any {
			q.Int("max_results", 10, 100, 10)
			return q.Required("query")
		}, "", []problem{{"query", "The `query` query parameter can not be empty"}}, true},
		{"handler rule", "a=1", func(q *Query) any { q.Fail("a", "The rule.", "1"); return q.Raw("a") }, "1", []problem{{"a", "The rule."}}, false},
		{"malformed query string", "a=%zz", func(q *Query) any { return q.Raw("a") }, "", []problem{{"a", "The `a` query parameter value is malformed: invalid URL escape \"%zz\""}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := ReadQuery(httptest.NewRequest("GET", "/x?"+tc.query, nil))
			if got := tc.read(q); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
			err := q.Err()
			if tc.errs == nil {
				if err != nil {
					t.Fatalf("Err() = %v, want nil", err)
				}
				return
			}
			var e *apierr.Error
			if !errors.As(err, &e) {
				t.Fatalf("Err() = %v, want an *apierr.Error", err)
			}
			if alone := e.AdsCode == "MISSING_PARAMETER"; alone != tc.alone {
				t.Errorf("missing = %v, want %v", alone, tc.alone)
			}
			var got []problem
			for _, p := range e.Params {
				for name := range p.Parameters {
					got = append(got, problem{name, p.Message})
				}
			}
			if !reflect.DeepEqual(got, tc.errs) {
				t.Errorf("problems %q, want %q", got, tc.errs)
			}
		})
	}
}
