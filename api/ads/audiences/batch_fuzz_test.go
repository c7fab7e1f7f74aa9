package audiences

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/storage"
)

// fuzzNow is the clock of FuzzParseBatch: seeds' times fall on both sides.
var fuzzNow = time.Date(2030, 3, 10, 12, 0, 0, 0, time.UTC)

// FuzzParseBatch compares the hand-written batch parser with a reference
// built on encoding/json (referenceBatch, the same rules over
// encoding/json's decoding):
//   - every body parseBatch accepts, encoding/json accepts and decodes to
//     the same operations (type, times, user count, keys in order);
//   - every body encoding/json rejects, parseBatch rejects;
//   - on valid UTF-8, they agree on every body: the parser's stricter
//     rules (a member given twice, member names matched case-sensitively,
//     null for a value, unknown members; docs/audiences.md) are the
//     reference's too. On invalid UTF-8 the parser may refuse more: it
//     refuses a raw invalid partner_user_id that encoding/json would
//     decode with U+FFFD;
//   - every refusal is an ads 400 (*apierr.Error), never another error.
//
// Seeds are the bodies of the batch tests (TestUsersBatchBadInput,
// TestAudienceBatchTimes) and a few spellings JSON allows (escapes,
// whitespace); crashers found are kept in testdata/fuzz/FuzzParseBatch.
func FuzzParseBatch(f *testing.F) {
	for _, s := range batchSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkBatch(t, body) })
}

// FuzzParseBatchValues is FuzzParseBatch on bodies of the batch's shape
// whose string contents (operation type, identifier name and value, a
// time) are the fuzzer's bytes pasted in unescaped: raw quotes,
// backslashes, escapes and control characters reach the string scanner
// inside otherwise valid batches.
func FuzzParseBatchValues(f *testing.F) {
	sum := sha256.Sum256([]byte("good@example.com"))
	good := hex.EncodeToString(sum[:])
	for _, s := range [][4]string{
		{"Update", "partner_user_id", "u1", "2031-01-15T00:00:00Z"},
		{"Delete", "email", good, "2029-06-01T00:00:00Z"},
		{"dElEtE", "partner_user_id", `a\"b\/c\u0000\ud800`, "2031-01-15"},
		{`Upd\u0061te`, `partner\u005fuser_id`, `\u00e9\t`, "2031-01-15T10:00+02:00"},
		{"Update", "handle", `\u0034` + good[1:], `2031-01-15T00:00:00.5Z`},
		{"Update", "device_id", strings.ToUpper(good), "2031-01-15T00:00:00+0100"},
		{"Update", "email", good[:63], "tomorrow"},
		{"Update", "partner_user_id", `x\x`, "2031-01-15T00:00:00Z"},
		{"Update", "partner_user_id", "\x01", "2031-01-15T00:00:00Z"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, opType, key, value, when string) {
		body := `[{"operation_type":"` + opType + `","params":{"users":[{"` + key + `":["` + value +
			`"]}],"effective_at":"` + when + `"}}]`
		checkBatch(t, []byte(body))
	})
}

// checkBatch compares parseBatch with referenceBatch on body.
func checkBatch(t *testing.T, body []byte) {
	t.Helper()
	ops, err := parseBatch(body, fuzzNow)
	want, ok := referenceBatch(body, fuzzNow)
	if err != nil {
		var e *apierr.Error
		if !errors.As(err, &e) || e.Status != 400 {
			t.Fatalf("refusal %v (%T) is not an ads 400", err, err)
		}
		if ok && utf8.Valid(body) {
			t.Fatalf("parser refuses what encoding/json accepts (%v): %q", err, body)
		}
		return
	}
	if !json.Valid(body) {
		t.Fatalf("parser accepts invalid JSON: %q", body)
	}
	if !ok {
		t.Fatalf("parser accepts what the reference refuses: %q", body)
	}
	if !sameOperations(ops, want) {
		t.Fatalf("parser %+v, encoding/json %+v for %q", ops, want, body)
	}
}

// TestBatchSeedsCoverBothOutcomes: the fuzz seeds hold bodies the parser
// accepts and bodies it refuses, so FuzzParseBatch's comparison starts
// from both sides.
func TestBatchSeedsCoverBothOutcomes(t *testing.T) {
	accepted, refused := 0, 0
	for _, s := range batchSeeds() {
		if _, err := parseBatch([]byte(s), fuzzNow); err == nil {
			accepted++
		} else {
			refused++
		}
	}
	t.Logf("seeds: %d accepted, %d refused", accepted, refused)
	if accepted < 8 || refused < 30 {
		t.Errorf("seeds: %d accepted, %d refused; want at least 8 and 30", accepted, refused)
	}
}

// sameOperations compares the fields the parser fills.
func sameOperations(a, b []storage.AudienceOperation) bool {
	return slices.EqualFunc(a, b, func(x, y storage.AudienceOperation) bool {
		return x.Type == y.Type && x.EffectiveAt.Equal(y.EffectiveAt) && x.ExpiresAt.Equal(y.ExpiresAt) &&
			x.Users == y.Users && slices.Equal(x.Keys, y.Keys)
	})
}

// batchSeeds are the fuzz test's seed bodies.
func batchSeeds() []string {
	sum := sha256.Sum256([]byte("good@example.com"))
	good := hex.EncodeToString(sum[:])
	user := `{"email":["` + good + `"]}`
	withUser := func(u string) string {
		return `[{"operation_type":"Update","params":{"users":[` + user + `,` + u + `]}}]`
	}
	withParams := func(extra string) string {
		return `[{"operation_type":"Update","params":{"users":[` + user + `]` + extra + `}}]`
	}
	seeds := []string{
		withUser(`{"email":["jane@example.com"]}`),
		withUser(`{"phone_number":["` + good + `","+15555550100"]}`),
		withUser(`{"handle":["` + good[:63] + `"]}`),
		withUser(`{"twitter_id":["` + good + `0"]}`),
		withUser(`{"device_id":["` + strings.Repeat("g", 64) + `"]}`),
		withUser(`{"email":[42]}`),
		withUser(`{"mail":["` + good + `"]}`),
		withUser(`{}`),
		withUser(`{"email":[],"handle":[]}`),
		withUser(`{"partner_user_id":[""]}`),
		withUser(`{"partner_user_id":["p-1","p\u00e9","\ud83d\ude00"],"device_id":["` + strings.ToUpper(good) + `"]}`),
		withUser(`{"email":["` + good + `"],"email":["` + good + `"]}`),
		withUser(`{"\u0065mail":["` + good + `"]}`),
		withUser(`{"Email":["` + good + `"]}`),
		withUser(`{"email":null}`),
		`[{"operation_type":"Upsert","params":{"users":[` + user + `]}}]`,
		`[{"operation_type":"dElEtE","params":{"users":[` + user + `]}}]`,
		`[{"params":{"users":[` + user + `]}}]`,
		`[{"operation_type":"Update"}]`,
		`[{"operation_type":"Update","params":{}}]`,
		`[{"operation_type":"Update","params":{"users":[]}}]`,
		`[{"operation_type":"Update","params":null}]`,
		`[{"operation_type":"Update","params":{"users":[` + user + `]},"extra":1}]`,
		withParams(`,"expiry":"2099-01-01T00:00:00Z"`),
		withParams(`,"users":[]`),
		withParams(`,"expires_at":"tomorrow"`),
		withParams(`,"effective_at":"05/15/2018"`),
		withParams(`,"expires_at":"2020-01-01T00:00:00Z"`),
		withParams(`,"effective_at":"2099-02-01T00:00:00Z","expires_at":"2099-01-01T00:00:00Z"`),
		withParams(`,"effective_at":"2031-01-15T00:00:00Z","expires_at":"2031-03-01T00:00:00Z"`),
		withParams(`,"effective_at":"2029-06-01T00:00:00Z"`),
		withParams(`,"effective_at":"2031-01-15","expires_at":"2031-03-01T10:00+02:00"`),
		withParams(`,"effective_at":"2018-05-15T00:00:00Z"`),
		withParams(`,"expires_at":null`),
		`[]`,
		`{"operation_type":"Update"}`,
		`[{"operation_type":"Update",`,
		`null`,
		"\t[ {\"operation_type\" : \"Delete\" ,\r\n \"params\" : { \"users\" : [ " + user + " ] } } ]\n",
		`[{"operation_type":"Update","params":{"users":[` + user + `]}}]]`,
		`[{"operation_type":"Upd\u0061te","params":{"users":[{"partner_user_id":["a\\\"b\/c\u0000"]}]}}]`,
		"[{\"operation_type\":\"Update\",\"params\":{\"users\":[{\"partner_user_id\":[\"\xff\"]}]}}]",
		`[{"operation_type":"Update","params":{"users":[` + user + `]}},{"operation_type":"Delete","params":{"users":[` + user + `,` + user + `]}}]`,
		withUser(`{"partner\u005fuser_id":["\ud800","\u00e9\t"],"handle":["\u0034` + good[1:] + `"]}`),
		withUser(`{"email":["` + good + `"],"handle":["` + good + `"],"phone_number":["` + good + `"],"twitter_id":["` + good +
			`"],"device_id":["` + good + `"],"partner_user_id":["x"],"email":["` + good + `"]}`),
		withUser(`{"email":["` + good + `"` + strings.Repeat(`,"`+good+`"`, 3) + `]}`),
		withParams(`,"effective_at":"2031-01-15T00:00:00.123456789+05:30","expires_at":"2031-03-01T00:00:00-0800"`),
		withParams(`,"effective_at":"2031-01-15T00:00:00Z" , "effective_at":"2031-01-16T00:00:00Z"`),
	}
	return seeds
}

// jsonWS is JSON's whitespace.
const jsonWS = " \t\r\n"

// referenceBatch applies the batch's rules to encoding/json's decoding of
// body: what parseBatch should return, and whether it should accept.
func referenceBatch(body []byte, now time.Time) ([]storage.AudienceOperation, bool) {
	var items []json.RawMessage
	if !startsWith(body, '[') || json.Unmarshal(body, &items) != nil || len(items) == 0 || len(items) > maxOperations {
		return nil, false
	}
	ops := make([]storage.AudienceOperation, 0, len(items))
	for _, it := range items {
		op, ok := refOperation(it, now)
		if !ok {
			return nil, false
		}
		ops = append(ops, op)
	}
	return ops, true
}

func refOperation(raw json.RawMessage, now time.Time) (storage.AudienceOperation, bool) {
	var op storage.AudienceOperation
	members, ok := refObject(raw)
	if !ok {
		return op, false
	}
	hasParams := false
	for _, m := range members {
		switch m.key {
		case "operation_type":
			v, ok := refString(m.val)
			if !ok {
				return op, false
			}
			i := slices.IndexFunc(storage.AudienceOperationTypes, func(t string) bool { return strings.EqualFold(t, v) })
			if i < 0 {
				return op, false
			}
			op.Type = storage.AudienceOperationTypes[i]
		case "params":
			hasParams = true
			if !refParams(m.val, &op, now) {
				return op, false
			}
		default:
			return op, false
		}
	}
	return op, op.Type != "" && hasParams
}

func refParams(raw json.RawMessage, op *storage.AudienceOperation, now time.Time) bool {
	members, ok := refObject(raw)
	if !ok {
		return false
	}
	var effective, expires *time.Time
	hasUsers := false
	for _, m := range members {
		switch m.key {
		case "users":
			hasUsers = true
			users, ok := refArray(m.val)
			if !ok {
				return false
			}
			for _, u := range users {
				if !refUser(u, op) {
					return false
				}
			}
		case "effective_at", "expires_at":
			v, ok := refString(m.val)
			if !ok {
				return false
			}
			t, ok := refTime(v)
			if !ok {
				return false
			}
			if m.key == "effective_at" {
				effective = &t
			} else {
				expires = &t
			}
		default:
			return false
		}
	}
	if !hasUsers || op.Users == 0 {
		return false
	}
	op.EffectiveAt = now
	if effective != nil {
		op.EffectiveAt = *effective
	}
	if expires == nil {
		op.ExpiresAt = op.EffectiveAt.AddDate(0, defaultExpiryMonths, 0)
		return op.ExpiresAt.After(now)
	}
	op.ExpiresAt = *expires
	return expires.After(now) && expires.After(op.EffectiveAt)
}

func refUser(raw json.RawMessage, op *storage.AudienceOperation) bool {
	members, ok := refObject(raw)
	if !ok {
		return false
	}
	before := len(op.Keys)
	for _, m := range members {
		kind, known := storage.AudienceIdentifiers[m.key]
		values, ok := refArray(m.val)
		if !known || !ok {
			return false
		}
		for _, v := range values {
			s, ok := refString(v)
			if !ok {
				return false
			}
			key := storage.MemberKey{kind}
			switch {
			case kind == storage.IdentPartnerUserID:
				if s == "" || len(s) > maxPartnerUserID {
					return false
				}
				sum := sha256.Sum256([]byte(s))
				copy(key[1:], sum[:])
			default:
				d, err := hex.DecodeString(s)
				if err != nil || len(d) != sha256.Size {
					return false
				}
				copy(key[1:], d)
			}
			op.Keys = append(op.Keys, key)
		}
	}
	if len(op.Keys) == before {
		return false
	}
	op.Users++
	return true
}

// refTime parses an ISO 8601 time in one of the accepted layouts, as UTC.
func refTime(v string) (time.Time, bool) {
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// member is one member of a JSON object, in document order.
type member struct {
	key string
	val json.RawMessage
}

// refObject decodes a JSON object with encoding/json's tokenizer, keeping
// its members in order; a member given twice refuses it.
func refObject(raw json.RawMessage) ([]member, bool) {
	if !startsWith(raw, '{') {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		key, isKey := t.(string)
		if err != nil || !isKey || slices.ContainsFunc(out, func(m member) bool { return m.key == key }) {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, member{key, v})
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	return out, true
}

// refArray decodes a JSON array (not null).
func refArray(raw json.RawMessage) ([]json.RawMessage, bool) {
	var out []json.RawMessage
	return out, startsWith(raw, '[') && json.Unmarshal(raw, &out) == nil
}

// refString decodes a JSON string (not null).
func refString(raw json.RawMessage) (string, bool) {
	var s string
	return s, startsWith(raw, '"') && json.Unmarshal(raw, &s) == nil
}

// startsWith reports whether raw's first byte after whitespace is c.
func startsWith(raw []byte, c byte) bool {
	raw = bytes.TrimLeft(raw, jsonWS)
	return len(raw) > 0 && raw[0] == c
}
