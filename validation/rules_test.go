package validation

import (
	"reflect"
	"testing"
)

type ruleInner struct {
	ID    string   `json:"id" validate:"coreid"`
	IDs   []string `json:"ids,omitempty" validate:"coreids"`
	Place string   `json:"place" validate:"length=1-4"`
}

type ruleRequest struct {
	Quote *string    `json:"quote,omitempty" validate:"coreid"`
	Inner *ruleInner `json:"inner,omitempty"`
	Word  string     `json:"word" validate:"test_word"`
	Other string     `json:"other"`
}

// TestRules: the shared rules and a registered one word their problems in
// the platform's words, name nested fields with dots, echo the offending
// value, see absent pointers and the whole request, and keep the
// validator's field order.
func TestRules(t *testing.T) {
	val := New()
	val.MustRegisterRule("test_word", func(f Field) *Problem {
		other := f.Request.Interface().(ruleRequest).Other
		if f.Value.String() == other {
			return nil
		}
		return Problemf([]string{f.Value.String(), other}, "The `%[1]s` field must equal `other` (%[2]s).", other)
	})
	val.MustRegisterRule("test_word", func(Field) *Problem { return Problemf(nil, "replaced") }) // the first rule stays
	str := func(s string) *string { return &s }
	tests := []struct {
		name string
		req  ruleRequest
		want []FieldError
	}{
		{"all fine, absent pointers pass", ruleRequest{}, nil},
		{"all fine, given", ruleRequest{Quote: str("12"), Inner: &ruleInner{ID: "1", IDs: []string{"2", "3"}, Place: "abcd"}, Word: "x", Other: "x"}, nil},
		{"coreid on a pointer", ruleRequest{Quote: str("1x")}, []FieldError{
			{Field: "quote", Values: []string{"1x"}, Message: "The `quote` field value [1x] does not match ^[0-9]{1,19}$."}}},
		{"nested fields are dotted", ruleRequest{Inner: &ruleInner{ID: "0", IDs: []string{"5", "x5"}, Place: ""}}, []FieldError{
			{Field: "inner.id", Values: []string{"0"}, Message: "The `inner.id` field value [0] does not match ^[0-9]{1,19}$."},
			{Field: "inner.ids", Values: []string{"x5"}, Message: "The `inner.ids` value [x5] does not match ^[0-9]{1,19}$."},
			{Field: "inner.place", Values: []string{""}, Message: "The `inner.place` field must be 1 to 4 characters."}}},
		{"length counts bytes", ruleRequest{Inner: &ruleInner{ID: "1", Place: "ééé"}}, []FieldError{
			{Field: "inner.place", Values: []string{"ééé"}, Message: "The `inner.place` field must be 1 to 4 characters."}}},
		{"a registered rule sees the request", ruleRequest{Word: "a", Other: "b"}, []FieldError{
			{Field: "word", Values: []string{"a", "b"}, Message: "The `word` field must equal `other` (b)."}}},
		{"rules and tags in field order", ruleRequest{Quote: str(""), Inner: &ruleInner{ID: "1", Place: "12345"}, Word: "a"}, []FieldError{
			{Field: "quote", Values: []string{""}, Message: "The `quote` field value [] does not match ^[0-9]{1,19}$."},
			{Field: "inner.place", Values: []string{"12345"}, Message: "The `inner.place` field must be 1 to 4 characters."},
			{Field: "word", Values: []string{"a", ""}, Message: "The `word` field must equal `other` ()."}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := val.Struct(&tc.req)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestUnseenAndProblemf(t *testing.T) {
	tests := []struct {
		name  string
		p     *Problem
		field string
		msg   string
		vals  []string
	}{
		{"unseen", Unseen("post", "42"), "tweet_id", "The `tweet_id` field names the post [42], which does not exist or which you can not see.", []string{"42"}},
		{"args after the name", Problemf(nil, "%[2]d of `%[1]s`; %[3]s", 3, "x"), "f", "3 of `f`; x", nil},
		{"no verbs", Problemf(nil, "The post you reply to was deleted."), "f", "The post you reply to was deleted.", nil},
		{"a value with verbs is not formatted", Problemf([]string{"%d"}, "The `%[1]s` value [%[2]s].", "%d"), "f", "The `f` value [%d].", []string{"%d"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Message(tc.field); got != tc.msg || !reflect.DeepEqual(tc.p.Values, tc.vals) {
				t.Errorf("%q %q, want %q %q", got, tc.p.Values, tc.msg, tc.vals)
			}
		})
	}
}

func TestUsername(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{"jack", true}, {"A_1", true}, {"123456789012345", true}, {"1234567890123456", false},
		{"", false}, {"a-b", false}, {"a b", false}, {"é", false},
	}
	for _, tc := range tests {
		if got := ValidUsername(tc.in); got != tc.ok {
			t.Errorf("ValidUsername(%q) = %v, want %v", tc.in, got, tc.ok)
		}
	}
	if e := UsernameError("usernames", "a-b"); e.Message != "The `usernames` query parameter value [a-b] does not match ^[A-Za-z0-9_]{1,15}$" {
		t.Errorf("query message %q", e.Message)
	}
	if e := PathUsernameError("username", "a-b"); e.Message != "The `username` path parameter value [a-b] does not match ^[A-Za-z0-9_]{1,15}$" {
		t.Errorf("path message %q", e.Message)
	}
}
