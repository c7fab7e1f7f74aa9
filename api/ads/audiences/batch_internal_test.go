package audiences

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// TestIdentifierAgreesWithIsSHA256Hex: the parser's digest check accepts
// exactly what validation.IsSHA256Hex accepts.
func TestIdentifierAgreesWithIsSHA256Hex(t *testing.T) {
	good := "49e0be2aeccfb51a8dee4c945c8a70a9ac500cf6f5cb08112575f74db9b1470d"
	for _, v := range []string{good, strings.ToUpper(good), good[:63], good + "0", "", "jane@example.com",
		strings.Repeat("g", 64), good[:62] + "0x", good[:63] + " ", strings.Repeat("é", 32), "+15555550100"} {
		var key storage.MemberKey
		got := identifier(storage.IdentEmail, []byte(v), &key) == nil
		if want := validation.IsSHA256Hex(v); got != want {
			t.Errorf("%q: accepted %v, IsSHA256Hex %v", v, got, want)
		}
	}
}

// TestAudienceBatchTimes: effective_at defaults to now and expires_at to 13 months
// after effective_at (not after now); an expires_at not after effective_at,
// or in the past, is refused naming expires_at, and an effective_at whose
// default expiry already passed is refused naming effective_at.
func TestAudienceBatchTimes(t *testing.T) {
	now := time.Date(2030, 3, 10, 12, 0, 0, 0, time.UTC)
	day := func(s string) time.Time {
		d, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	tests := []struct {
		name             string
		params           string
		effective, until time.Time
		param            string // the parameter of the refusal, "" if accepted
	}{
		{"neither", ``, now, now.AddDate(0, 13, 0), ""},
		{"effective_at ahead, no expires_at", `,"effective_at":"2031-01-15T00:00:00Z"`,
			day("2031-01-15T00:00:00Z"), day("2032-02-15T00:00:00Z"), ""},
		{"effective_at behind, no expires_at", `,"effective_at":"2029-06-01T00:00:00Z"`,
			day("2029-06-01T00:00:00Z"), day("2030-07-01T00:00:00Z"), ""},
		{"both", `,"effective_at":"2031-01-15T00:00:00Z","expires_at":"2031-03-01T00:00:00Z"`,
			day("2031-01-15T00:00:00Z"), day("2031-03-01T00:00:00Z"), ""},
		{"expires_at only", `,"expires_at":"2030-04-01T00:00:00Z"`, now, day("2030-04-01T00:00:00Z"), ""},
		{"expires_at equal to effective_at", `,"effective_at":"2031-01-15T00:00:00Z","expires_at":"2031-01-15T00:00:00Z"`,
			time.Time{}, time.Time{}, "operations[0].params.expires_at"},
		{"expires_at before effective_at", `,"effective_at":"2031-01-15T00:00:00Z","expires_at":"2031-01-14T00:00:00Z"`,
			time.Time{}, time.Time{}, "operations[0].params.expires_at"},
		{"expires_at in the past", `,"expires_at":"2030-03-10T11:59:59Z"`, time.Time{}, time.Time{}, "operations[0].params.expires_at"},
		{"effective_at more than 13 months ago", `,"effective_at":"2029-02-10T12:00:00Z"`,
			time.Time{}, time.Time{}, "operations[0].params.effective_at"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := `[{"operation_type":"Update","params":{"users":[{"partner_user_id":["u1"]}]` + tc.params + `}}]`
			ops, err := parseBatch([]byte(body), now)
			if tc.param != "" {
				var e *apierr.Error
				if !errors.As(err, &e) || len(e.Params) != 1 || e.Params[0].Parameters[tc.param] == nil || e.Status != 400 {
					t.Fatalf("error %v, want a 400 naming %s", err, tc.param)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if got := ops[0]; !got.EffectiveAt.Equal(tc.effective) || !got.ExpiresAt.Equal(tc.until) {
				t.Errorf("effective_at %s expires_at %s, want %s, %s", got.EffectiveAt, got.ExpiresAt, tc.effective, tc.until)
			}
		})
	}
}

// TestAudienceBatchPeople: a user object with several identifiers is one
// person (a key range of the operation); one with a single identifier
// needs none.
func TestAudienceBatchPeople(t *testing.T) {
	d := func(c byte) string { return strings.Repeat(string(c), 64) }
	body := `[{"operation_type":"Update","params":{"users":[` +
		`{"email":["` + d('a') + `"]},` +
		`{"email":["` + d('b') + `"],"phone_number":["` + d('c') + `","` + d('d') + `"]},` +
		`{"partner_user_id":["p1"]},` +
		`{"handle":["` + d('e') + `"],"twitter_id":["` + d('f') + `"]}]}},` +
		`{"operation_type":"Delete","params":{"users":[{"email":["` + d('a') + `"]}]}}]`
	ops, err := parseBatch([]byte(body), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	want := []storage.KeyRange{{Start: 1, End: 4}, {Start: 5, End: 7}}
	if got := ops[0].People; len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || ops[0].Users != 4 || len(ops[0].Keys) != 7 {
		t.Errorf("people %v users %d keys %d, want %v, 4 users, 7 keys", got, ops[0].Users, len(ops[0].Keys), want)
	}
	if ops[1].People != nil || ops[1].Users != 1 {
		t.Errorf("one-identifier user: people %v users %d, want none and 1", ops[1].People, ops[1].Users)
	}
}
