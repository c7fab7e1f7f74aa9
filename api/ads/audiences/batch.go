package audiences

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// Users batch limits (the reference's).
const (
	maxOperations    = 2500
	maxBatchBytes    = 5_000_000
	maxPartnerUserID = 255
	// defaultExpiryMonths is how long a membership lasts after its
	// effective_at without expires_at.
	defaultExpiryMonths = 13
)

var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04Z07:00", "2006-01-02"}

// parseBatch validates a users batch body (a JSON array of operations)
// and returns its normalized operations, or the first error as the ads
// error naming the operation and field. It scans the bytes once without
// building a document: a 5 MB batch takes milliseconds.
func parseBatch(body []byte, now time.Time) ([]storage.AudienceOperation, error) {
	p := &batchParser{b: body, now: now.UTC()}
	return p.batch()
}

// batchParser is a JSON scanner specialised to the batch's shape.
type batchParser struct {
	b   []byte
	i   int
	now time.Time
}

func (p *batchParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// eat consumes c after whitespace if it is next.
func (p *batchParser) eat(c byte) bool {
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// syntax is the error of malformed JSON at the current offset.
func (p *batchParser) syntax(want string) error {
	return adsx.Invalid("body", fmt.Sprintf("The request body is not valid JSON: expected %s at offset %d", want, p.i))
}

// str reads a string; without escapes the result aliases the body.
func (p *batchParser) str() ([]byte, error) {
	if !p.eat('"') {
		return nil, p.syntax("a string")
	}
	start := p.i
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			return p.b[start : p.i-1], nil
		case c == '\\':
			return p.escaped(start - 1)
		case c < 0x20:
			return nil, p.syntax("no control character in a string")
		}
		p.i++
	}
	return nil, p.syntax("the end of a string")
}

// escaped reads a string with escapes that starts at the quote at start.
func (p *batchParser) escaped(start int) ([]byte, error) {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '\\':
			p.i += 2
			continue
		case '"':
			p.i++
			var s string
			if err := json.Unmarshal(p.b[start:p.i], &s); err != nil {
				return nil, p.syntax("a valid string")
			}
			return []byte(s), nil
		}
		p.i++
	}
	return nil, p.syntax("the end of a string")
}

// object reads an object, calling field for each member with the reader
// positioned at its value; a member given twice is refused under the
// name prefix+key.
func (p *batchParser) object(prefix string, field func(key string) error) error {
	if !p.eat('{') {
		return p.syntax("an object")
	}
	if p.eat('}') {
		return nil
	}
	var seen []string
	for {
		key, err := p.str()
		if err != nil {
			return err
		}
		name := string(key)
		for _, s := range seen {
			if s == name {
				return adsx.Invalid(prefix+name, fmt.Sprintf("%s%s is given more than once", prefix, name))
			}
		}
		seen = append(seen, name)
		if !p.eat(':') {
			return p.syntax("':'")
		}
		if err := field(name); err != nil {
			return err
		}
		if p.eat(',') {
			continue
		}
		if p.eat('}') {
			return nil
		}
		return p.syntax("',' or '}'")
	}
}

// array reads an array, calling item for each element with its index.
func (p *batchParser) array(item func(i int) error) error {
	if !p.eat('[') {
		return p.syntax("an array")
	}
	if p.eat(']') {
		return nil
	}
	for i := 0; ; i++ {
		if err := item(i); err != nil {
			return err
		}
		if p.eat(',') {
			continue
		}
		if p.eat(']') {
			return nil
		}
		return p.syntax("',' or ']'")
	}
}

// batch is the whole body.
func (p *batchParser) batch() ([]storage.AudienceOperation, error) {
	p.ws()
	if p.i >= len(p.b) || p.b[p.i] != '[' {
		return nil, adsx.Invalid("body", "The request body must be a JSON array of operations")
	}
	var ops []storage.AudienceOperation
	err := p.array(func(i int) error {
		if i >= maxOperations {
			return adsx.Invalid("operations", fmt.Sprintf("A batch takes at most %d operations", maxOperations))
		}
		op, err := p.operation(i)
		ops = append(ops, op)
		return err
	})
	if err != nil {
		return nil, err
	}
	if p.ws(); p.i != len(p.b) {
		return nil, p.syntax("the end of the body")
	}
	if len(ops) == 0 {
		return nil, adsx.Invalid("operations", "A batch takes at least one operation")
	}
	return ops, nil
}

// operation reads operations[i].
func (p *batchParser) operation(i int) (storage.AudienceOperation, error) {
	prefix := fmt.Sprintf("operations[%d].", i)
	var op storage.AudienceOperation
	var hasParams bool
	err := p.object(prefix, func(key string) error {
		switch key {
		case "operation_type":
			return p.operationType(prefix, &op)
		case "params":
			hasParams = true
			return p.params(prefix+"params.", &op)
		}
		return unknown(prefix + key)
	})
	switch {
	case err != nil:
		return op, err
	case op.Type == "":
		return op, adsx.Missing(prefix + "operation_type")
	case !hasParams:
		return op, adsx.Missing(prefix + "params")
	}
	return op, nil
}

func (p *batchParser) operationType(prefix string, op *storage.AudienceOperation) error {
	v, err := p.str()
	if err != nil {
		return err
	}
	for _, t := range storage.AudienceOperationTypes {
		if strings.EqualFold(t, string(v)) {
			op.Type = t
			return nil
		}
	}
	return adsx.Invalid(prefix+"operation_type", fmt.Sprintf("Expected one of [Update, Delete], got %q for %soperation_type",
		clip(string(v)), prefix), clip(string(v)))
}

// params reads operations[i].params.
func (p *batchParser) params(prefix string, op *storage.AudienceOperation) error {
	var effective, expires *time.Time
	hasUsers := false
	err := p.object(prefix, func(key string) error {
		var err error
		switch key {
		case "users":
			hasUsers = true
			return p.users(prefix+"users", op)
		case "effective_at":
			effective, err = p.time(prefix + key)
			return err
		case "expires_at":
			expires, err = p.time(prefix + key)
			return err
		}
		return unknown(prefix + key)
	})
	switch {
	case err != nil:
		return err
	case !hasUsers:
		return adsx.Missing(prefix + "users")
	case op.Users == 0:
		return adsx.Invalid(prefix+"users", prefix+"users must hold at least one user")
	}
	return p.times(prefix, op, effective, expires)
}

// times settles the operation's times: effective_at defaults to now,
// expires_at to 13 months after effective_at; expires_at must be in the
// future and after effective_at. Without expires_at, an effective_at so
// old that its default expiry has passed is refused (the members would
// never count).
func (p *batchParser) times(prefix string, op *storage.AudienceOperation, effective, expires *time.Time) error {
	op.EffectiveAt = p.now
	if effective != nil {
		op.EffectiveAt = *effective
	}
	if expires == nil {
		op.ExpiresAt = op.EffectiveAt.AddDate(0, defaultExpiryMonths, 0)
		if op.ExpiresAt.Year() > validation.MaxYear {
			return adsx.Invalid(prefix+"effective_at", fmt.Sprintf("%seffective_at is so late that the default expires_at "+
				"(effective_at + %d months) falls after the year %d: send expires_at", prefix, defaultExpiryMonths, validation.MaxYear),
				op.EffectiveAt.Format(time.RFC3339))
		}
		if !op.ExpiresAt.After(p.now) {
			return adsx.Invalid(prefix+"effective_at", fmt.Sprintf("%seffective_at is more than %d months ago, so the default "+
				"expires_at (effective_at + %d months) has passed: send expires_at", prefix, defaultExpiryMonths, defaultExpiryMonths),
				op.EffectiveAt.Format(time.RFC3339))
		}
		return nil
	}
	if !expires.After(p.now) {
		return adsx.Invalid(prefix+"expires_at", prefix+"expires_at must be in the future", expires.Format(time.RFC3339))
	}
	if !expires.After(op.EffectiveAt) {
		return adsx.Invalid(prefix+"expires_at", prefix+"expires_at must be later than effective_at", expires.Format(time.RFC3339))
	}
	op.ExpiresAt = *expires
	return nil
}

func (p *batchParser) time(name string) (*time.Time, error) {
	v, err := p.str()
	if err != nil {
		return nil, err
	}
	for _, layout := range timeLayouts {
		t, err := time.Parse(layout, string(v))
		if err != nil {
			continue
		}
		if msg := validation.OffsetError(t); msg != "" {
			return nil, adsx.Invalid(name, fmt.Sprintf("%q is not a valid time for %s: %s", clip(string(v)), name, msg), clip(string(v)))
		}
		if t = t.UTC(); t.Year() > validation.MaxYear {
			return nil, adsx.Invalid(name, fmt.Sprintf("%s must be before the year %d", name, validation.MaxYear+1), clip(string(v)))
		}
		return &t, nil
	}
	return nil, adsx.Invalid(name, fmt.Sprintf("Expected an ISO 8601 time, got %q for %s", clip(string(v)), name), clip(string(v)))
}

// users reads the users array into op's keys. It is the hot loop of a
// batch (tens of thousands of users), so it allocates nothing per user:
// parameter names are built only for an error.
func (p *batchParser) users(name string, op *storage.AudienceOperation) error {
	if !p.eat('[') {
		return p.syntax("an array")
	}
	if p.eat(']') {
		return nil
	}
	for j := 0; ; j++ {
		if err := p.user(name, j, op); err != nil {
			return err
		}
		if p.eat(',') {
			continue
		}
		if p.eat(']') {
			return nil
		}
		return p.syntax("',' or ']'")
	}
}

// user reads users[j].
func (p *batchParser) user(name string, j int, op *storage.AudienceOperation) error {
	field := func(key []byte) string { return name + "[" + strconv.Itoa(j) + "]." + string(key) }
	if !p.eat('{') {
		return p.syntax("an object")
	}
	before := len(op.Keys)
	var seen [8][]byte
	n := 0
	for !p.eat('}') {
		if n > 0 && !p.eat(',') {
			return p.syntax("',' or '}'")
		}
		key, err := p.str()
		if err != nil {
			return err
		}
		kind, ok := storage.AudienceIdentifiers[string(key)]
		if !ok {
			return unknown(field(key))
		}
		for _, s := range seen[:min(n, len(seen))] {
			if bytes.Equal(s, key) {
				return adsx.Invalid(field(key), field(key)+" is given more than once")
			}
		}
		if n < len(seen) {
			seen[n] = key
		}
		n++
		if !p.eat(':') {
			return p.syntax("':'")
		}
		if err := p.identifiers(kind, op, func() string { return field(key) }); err != nil {
			return err
		}
	}
	if len(op.Keys) == before {
		user := name + "[" + strconv.Itoa(j) + "]"
		return adsx.Invalid(user, user+" must carry at least one identifier (email, phone_number, handle, twitter_id, device_id, partner_user_id)")
	}
	if len(op.Keys)-before > 1 { // one person with several identifiers
		op.People = append(op.People, storage.KeyRange{Start: int32(before), End: int32(len(op.Keys))})
	}
	op.Users++
	return nil
}

// identifiers reads one identifier array of a user: SHA-256 hex digests,
// or (partner_user_id) the partner's own ids, keyed by their digest.
func (p *batchParser) identifiers(kind byte, op *storage.AudienceOperation, name func() string) error {
	if !p.eat('[') {
		return p.syntax("an array")
	}
	if p.eat(']') {
		return nil
	}
	for k := 0; ; k++ {
		v, err := p.str()
		if err != nil {
			return err
		}
		op.Keys = append(op.Keys, storage.MemberKey{kind})
		if err := identifier(kind, v, &op.Keys[len(op.Keys)-1]); err != nil {
			item := name() + "[" + strconv.Itoa(k) + "]"
			return adsx.Invalid(item, item+err.Error())
		}
		if p.eat(',') {
			continue
		}
		if p.eat(']') {
			return nil
		}
		return p.syntax("',' or ']'")
	}
}

// errNotDigest completes "<parameter> ..." for a value that is not a digest.
var errNotDigest = errors.New(" must be the SHA-256 hex digest (64 hex characters) of the normalized value")

// identifier fills key's digest from v; the error completes the sentence
// "<parameter> ...".
func identifier(kind byte, v []byte, key *storage.MemberKey) error {
	if kind == storage.IdentPartnerUserID {
		switch {
		case !utf8.Valid(v):
			return errors.New(" must be valid UTF-8 text")
		case len(v) == 0 || utf8.RuneCount(v) > maxPartnerUserID:
			return fmt.Errorf(" must be 1 to %d characters", maxPartnerUserID)
		}
		sum := sha256.Sum256(v)
		copy(key[1:], sum[:])
		return nil
	}
	// Decoding is the check: exactly 64 hex digits of either case, what
	// validation.IsSHA256Hex accepts (TestIdentifierAgreesWithIsSHA256Hex),
	// in a third of its time on a 5 MB batch.
	if len(v) != 2*sha256.Size {
		return errNotDigest
	}
	if _, err := hex.Decode(key[1:], v); err != nil {
		return errNotDigest
	}
	return nil
}

// unknown refuses a member the batch does not define.
func unknown(name string) *apierr.Error {
	return adsx.Invalid(name, fmt.Sprintf("%s is not a parameter of a custom audience users batch", name))
}

// clip shortens a value echoed in an error.
func clip(s string) string {
	const max = 64
	if len(s) <= max {
		return strings.ToValidUTF8(s, "")
	}
	return strings.ToValidUTF8(s[:max], "") + "..."
}
