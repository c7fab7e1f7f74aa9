package ratelimit

import (
	"errors"
	"testing"
	"time"
)

func TestRuleValidate(t *testing.T) {
	tests := []struct {
		name string
		rule Rule
		ok   bool
	}{
		{"valid", Rule{Name: "tweets.lookup", Limit: 900, Window: 15 * time.Minute, Scope: PerUser}, true},
		{"empty name", Rule{Limit: 1, Window: time.Minute}, false},
		{"colon in name", Rule{Name: "a:b", Limit: 1, Window: time.Minute}, false},
		{"space in name", Rule{Name: "GET /2/tweets", Limit: 1, Window: time.Minute}, false},
		{"zero limit", Rule{Name: "a", Window: time.Minute}, false},
		{"sub-second window", Rule{Name: "a", Limit: 1, Window: 500 * time.Millisecond}, false},
		{"fractional window", Rule{Name: "a", Limit: 1, Window: 1500 * time.Millisecond}, false},
		{"unknown scope", Rule{Name: "a", Limit: 1, Window: time.Minute, Scope: 7}, false},
		{"24-hour headers", Rule{Name: "a", Limit: 1, Window: 24 * time.Hour, Headers: HeadersUser24Hour}, true},
		{"header prefix with a colon", Rule{Name: "a", Limit: 1, Window: time.Minute, Headers: "X-A:b"}, false},
		{"header prefix with a space", Rule{Name: "a", Limit: 1, Window: time.Minute, Headers: "X A"}, false},
	}
	for _, tt := range tests {
		if err := tt.rule.Validate(); (err == nil) != tt.ok {
			t.Errorf("%s: Validate() = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}

func TestRegistry(t *testing.T) {
	a := Rule{Name: "a", Limit: 1, Window: time.Minute}
	b := Rule{Name: "b", Limit: 2, Window: time.Hour, Scope: PerUser}
	steps := []struct {
		name     string
		rule     Rule
		conflict bool
		invalid  bool
	}{
		{"register b", b, false, false},
		{"register a", a, false, false},
		{"identical again", a, false, false},
		{"same name, other limit", Rule{Name: "a", Limit: 5, Window: time.Minute}, true, false},
		{"invalid", Rule{Name: "c"}, false, true},
	}
	g := NewRegistry()
	for _, s := range steps {
		err := g.Register(s.rule)
		if got := errors.Is(err, errConflict); got != s.conflict {
			t.Errorf("%s: err = %v, want conflict=%v", s.name, err, s.conflict)
		}
		if (err != nil) != (s.conflict || s.invalid) {
			t.Errorf("%s: err = %v", s.name, err)
		}
	}
	if got := g.Rules(); len(got) != 2 || got[0] != a || got[1] != b {
		t.Errorf("Rules() = %v, want [a b]", got)
	}
	if r, ok := g.Lookup("b"); !ok || r != b {
		t.Errorf("Lookup(b) = %v, %v", r, ok)
	}
	if _, ok := g.Lookup("c"); ok {
		t.Error("Lookup(c) found an invalid rule")
	}
}

func TestMustRegisterPanicsOnConflict(t *testing.T) {
	g := NewRegistry()
	if got := g.MustRegister(Rule{Name: "a", Limit: 1, Window: time.Minute}); got.Name != "a" {
		t.Fatalf("MustRegister returned %v", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("MustRegister accepted a conflicting rule")
		}
	}()
	g.MustRegister(Rule{Name: "a", Limit: 2, Window: time.Minute})
}

func TestWindowStart(t *testing.T) {
	tests := []struct {
		now    int64
		window time.Duration
		want   int64
	}{
		{1_700_000_000, 15 * time.Minute, 1_699_999_200},
		{1_699_999_200, 15 * time.Minute, 1_699_999_200},
		{1_700_000_000, 24 * time.Hour, 1_699_920_000},
		{59, time.Minute, 0},
		{-1, 10 * time.Second, -10},
	}
	for _, tt := range tests {
		if got := windowStart(time.Unix(tt.now, 0), tt.window).Unix(); got != tt.want {
			t.Errorf("windowStart(%d, %v) = %d, want %d", tt.now, tt.window, got, tt.want)
		}
	}
}
