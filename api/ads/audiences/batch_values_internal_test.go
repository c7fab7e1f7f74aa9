package audiences

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
)

// TestAudienceBatchRefusedValues: times past the year 9999 (given, or
// the default expiry of a late effective_at) and offsets of no place are
// refused naming the time; a partner_user_id that is not UTF-8 is refused
// as such (not as a length), and its length is counted in characters.
func TestAudienceBatchRefusedValues(t *testing.T) {
	now := time.Date(2030, 3, 10, 12, 0, 0, 0, time.UTC)
	const user = `{"partner_user_id":["u1"]}`
	tests := []struct {
		name, users, params string
		param, want, refute string // the refusal ("" if accepted), its message
	}{
		{"effective_at 9999-12-31", user, `,"effective_at":"9999-12-31T00:00:00Z"`,
			"operations[0].params.effective_at", "after the year 9999", ""},
		{"effective_at 9999-12-31 in a later offset", user, `,"effective_at":"9999-12-31T23:00:00-02:00"`,
			"operations[0].params.effective_at", "before the year 10000", ""},
		{"effective_at offset -24:00", user, `,"effective_at":"2031-01-01T00:00:00-24:00"`,
			"operations[0].params.effective_at", "-24:00", ""},
		{"expires_at offset +23:00", user, `,"expires_at":"2031-01-01T00:00:00+23:00"`,
			"operations[0].params.expires_at", "+23:00", ""},
		{"late effective_at with expires_at", user, `,"effective_at":"9999-06-01T00:00:00Z","expires_at":"9999-07-01T00:00:00+14:00"`, "", "", ""},
		{"partner_user_id not UTF-8", "{\"partner_user_id\":[\"\xff\xfe\"]}", ``,
			"operations[0].params.users[0].partner_user_id[0]", "UTF-8", "characters"},
		{"partner_user_id empty", `{"partner_user_id":[""]}`, ``,
			"operations[0].params.users[0].partner_user_id[0]", "1 to 255 characters", ""},
		{"partner_user_id of 256 characters", `{"partner_user_id":["` + strings.Repeat("a", 256) + `"]}`, ``,
			"operations[0].params.users[0].partner_user_id[0]", "1 to 255 characters", ""},
		{"partner_user_id of 255 two-byte characters", `{"partner_user_id":["` + strings.Repeat("é", 255) + `"]}`, ``, "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := `[{"operation_type":"Update","params":{"users":[` + tc.users + `]` + tc.params + `}}]`
			_, err := parseBatch([]byte(body), now)
			if tc.param == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var e *apierr.Error
			if !errors.As(err, &e) || len(e.Params) != 1 || e.Params[0].Parameters[tc.param] == nil || e.Status != 400 {
				t.Fatalf("error %v, want a 400 naming %s", err, tc.param)
			}
			msg := e.Params[0].Message
			if !strings.Contains(msg, tc.want) || tc.refute != "" && strings.Contains(msg, tc.refute) {
				t.Errorf("message %q: want %q in it, not %q", msg, tc.want, tc.refute)
			}
		})
	}
}
