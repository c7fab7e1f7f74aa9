package validation

import (
	"strings"
	"testing"
)

func TestParseID(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1", 1, true},
		{"1460323737035677698", 1460323737035677698, true},
		{"9223372036854775807", 9223372036854775807, true},
		{"9223372036854775808", 0, false}, // overflows int64
		{"0", 0, false},
		{"", 0, false},
		{"12a", 0, false},
		{"-5", 0, false},
		{"12345678901234567890", 0, false}, // 20 digits
		{" 12", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseID(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseID(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestFieldList(t *testing.T) {
	allowed := []string{"id", "name", "status"}
	tests := []struct {
		in        string
		want      []string
		errFields int
		errSub    string
	}{
		{"id,name", []string{"id", "name"}, 0, ""},
		{"status", []string{"status"}, 0, ""},
		{"", nil, 1, "can not be empty"},
		{"id,bogus", []string{"id"}, 1, "[bogus] is not one of [id,name,status]"},
		{"id,id", []string{"id"}, 1, "duplicated"},
		{"id,", []string{"id"}, 1, "[] is not one of"},
	}
	for _, tt := range tests {
		got, errs := FieldList("x.fields", tt.in, allowed)
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("FieldList(%q) items = %v; want %v", tt.in, got, tt.want)
		}
		if len(errs) != tt.errFields {
			t.Fatalf("FieldList(%q) errors = %v; want %d", tt.in, errs, tt.errFields)
		}
		if tt.errSub != "" && !strings.Contains(errs[0].Message, tt.errSub) {
			t.Errorf("FieldList(%q) message %q lacks %q", tt.in, errs[0].Message, tt.errSub)
		}
	}
}

func TestStruct(t *testing.T) {
	type body struct {
		Type string `json:"type" validate:"required,oneof=tweets users"`
		Name string `json:"name" validate:"max=64"`
		Ref  string `json:"ref,omitempty" validate:"omitempty,coreid"`
	}
	v := New()
	tests := []struct {
		name   string
		in     body
		fields []string
	}{
		{"valid", body{Type: "tweets"}, nil},
		{"missing type", body{}, []string{"type"}},
		{"bad enum", body{Type: "likes"}, []string{"type"}},
		{"long name", body{Type: "users", Name: strings.Repeat("n", 65)}, []string{"name"}},
		{"bad id", body{Type: "users", Ref: "x1"}, []string{"ref"}},
		{"two errors", body{Type: "x", Ref: "0"}, []string{"type", "ref"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := v.Struct(tt.in)
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
				if e.Message == "" {
					t.Errorf("empty message for %s", e.Field)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.fields, ",") {
				t.Errorf("fields = %v; want %v", got, tt.fields)
			}
		})
	}
}

func TestEnum(t *testing.T) {
	if e := Enum("type", "tweets", []string{"tweets", "users"}); e != nil {
		t.Fatalf("valid enum rejected: %v", e)
	}
	e := Enum("type", "likes", []string{"tweets", "users"})
	if e == nil || e.Message != "The `type` query parameter value [likes] is not one of [tweets,users]" {
		t.Fatalf("unexpected enum error %+v", e)
	}
}

func TestRegisterEnum(t *testing.T) {
	v := New()
	if err := v.RegisterEnum("job_type", []string{"tweets", "users"}); err != nil {
		t.Fatal(err)
	}
	if err := v.RegisterEnum("job_type", []string{"tweets", "users"}); err != nil {
		t.Errorf("registering the same list again: %v", err)
	}
	if err := v.RegisterEnum("job_type", []string{"tweets"}); err == nil {
		t.Error("a second, different list under one name was accepted")
	}
	type body struct {
		Type string `json:"type" validate:"enum=job_type"`
	}
	tests := []struct {
		name string
		errs []FieldError
		want string
	}{
		{"body", v.Struct(&body{Type: "likes"}), "The `type` field value [likes] is not one of [tweets,users]"},
		{"valid", v.Struct(&body{Type: "users"}), ""},
	}
	for _, tc := range tests {
		got := ""
		if len(tc.errs) > 0 {
			got = tc.errs[0].Message
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestMissingValueHasNoValues: a required pointer that was not given is
// reported without values (never Go's "<nil>").
func TestMissingValueHasNoValues(t *testing.T) {
	type body struct {
		Index *int   `json:"segment_index" validate:"required"`
		Name  string `json:"name" validate:"max=2"`
	}
	errs := New().Struct(body{Name: "long"})
	if len(errs) != 2 {
		t.Fatalf("errors = %+v, want two", errs)
	}
	for _, e := range errs {
		want := map[string][]string{"segment_index": {}, "name": {"long"}}[e.Field]
		if strings.Join(e.Values, "|") != strings.Join(want, "|") || e.Values == nil {
			t.Errorf("%s values = %#v, want %#v", e.Field, e.Values, want)
		}
	}
}
