package faults

import (
	"errors"
	"testing"
	"time"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name    string
		f       Fault
		wantErr bool
		check   func(t *testing.T, f Fault)
	}{
		{name: "status 429 defaults probability 1", f: Fault{Effect: Effect{Kind: Status, Status: 429}},
			check: func(t *testing.T, f Fault) {
				if f.Probability != 1 {
					t.Errorf("probability = %v, want 1", f.Probability)
				}
			}},
		{name: "count sets remaining, method upper", f: Fault{Match: Match{Method: "get"}, Effect: Effect{Kind: Status, Status: 503}, Count: 3},
			check: func(t *testing.T, f Fault) {
				if f.Remaining != 3 || f.Match.Method != "GET" {
					t.Errorf("remaining %d method %q", f.Remaining, f.Match.Method)
				}
			}},
		{name: "unknown kind", f: Fault{Effect: Effect{Kind: "boom"}}, wantErr: true},
		{name: "status out of range", f: Fault{Effect: Effect{Kind: Status, Status: 200}}, wantErr: true},
		{name: "status on another kind", f: Fault{Effect: Effect{Kind: UsageCapped, Status: 429}}, wantErr: true},
		{name: "latency without ms", f: Fault{Effect: Effect{Kind: Latency}}, wantErr: true},
		{name: "latency too long", f: Fault{Effect: Effect{Kind: Latency, LatencyMS: 61000}}, wantErr: true},
		{name: "probability above 1", f: Fault{Effect: Effect{Kind: Status, Status: 500}, Probability: 1.5}, wantErr: true},
		{name: "negative count", f: Fault{Effect: Effect{Kind: Status, Status: 500}, Count: -1}, wantErr: true},
		{name: "route without slash", f: Fault{Match: Match{Route: "2/tweets"}, Effect: Effect{Kind: Status, Status: 500}}, wantErr: true},
		{name: "work fault with a match", f: Fault{Match: Match{Method: "POST"}, Effect: Effect{Kind: MediaFailure}}, wantErr: true},
		{name: "work fault", f: Fault{Effect: Effect{Kind: CRCTimeout}, Count: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.f
			err := f.Normalize()
			if (err != nil) != tt.wantErr {
				t.Fatalf("Normalize() = %v, want error %v", err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v is not ErrInvalid", err)
			}
			if tt.check != nil {
				tt.check(t, f)
			}
		})
	}
}

func TestMatchesRequest(t *testing.T) {
	req := Request{AppID: 7, Method: "GET", Pattern: "/2/tweets/{id}", Path: "/2/tweets/123"}
	status := Effect{Kind: Status, Status: 503}
	tests := []struct {
		name string
		f    Fault
		want bool
	}{
		{"any request of any app", Fault{Effect: status}, true},
		{"its app", Fault{AppID: 7, Effect: status}, true},
		{"another app", Fault{AppID: 8, Effect: status}, false},
		{"method and route", Fault{Match: Match{Method: "GET", Route: "/2/tweets/{id}"}, Effect: status}, true},
		{"other method", Fault{Match: Match{Method: "POST", Route: "/2/tweets/{id}"}, Effect: status}, false},
		{"other route", Fault{Match: Match{Route: "/2/tweets"}, Effect: status}, false},
		{"path prefix", Fault{Match: Match{PathPrefix: "/2/tweets/"}, Effect: status}, true},
		{"other path prefix", Fault{Match: Match{PathPrefix: "/2/users"}, Effect: status}, false},
		{"a work fault never matches a request", Fault{Effect: Effect{Kind: MediaFailure}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.f.MatchesRequest(req); got != tt.want {
				t.Errorf("MatchesRequest = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestActive(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		f    Fault
		want bool
	}{
		{"no limits", Fault{}, true},
		{"expired", Fault{ExpiresAt: now}, false},
		{"not yet expired", Fault{ExpiresAt: now.Add(time.Second)}, true},
		{"count left", Fault{Count: 2, Remaining: 1}, true},
		{"count used up", Fault{Count: 2, Remaining: 0}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.f.Active(now); got != tt.want {
				t.Errorf("Active = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMatchesWork(t *testing.T) {
	f := Fault{AppID: 3, Effect: Effect{Kind: CRCFailure}}
	if !f.MatchesWork(CRCFailure, 3) || f.MatchesWork(CRCFailure, 4) || f.MatchesWork(MediaFailure, 3) {
		t.Error("MatchesWork does not keep to its kind and app")
	}
	if any := (Fault{Effect: Effect{Kind: MediaFailure}}); !any.MatchesWork(MediaFailure, 9) {
		t.Error("a fault of no app matches every app's work")
	}
}
