package donotreach

import (
	"fmt"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// maxExpiryMonths is how far ahead expires_at may be, and its default: 13
// months.
const maxExpiryMonths = 13

// Member key prefixes: what kind of identifier a hashed value is.
const (
	keyEmail = "e:"
	keyPhone = "p:"
)

// checker collects the problems of a batch's operations.
type checker struct {
	now  time.Time
	errs []apierr.ParamError
}

// fail records a problem of the named field (up to maxReportedErrors).
func (c *checker) fail(code, name, message string, value ...string) {
	if len(c.errs) == maxReportedErrors {
		return
	}
	e := apierr.Param(name, message, value...)
	e.Code = code
	c.errs = append(c.errs, e)
}

// err is every problem as one 400, nil if there is none.
func (c *checker) err() error {
	if len(c.errs) == 0 {
		return nil
	}
	e := apierr.InvalidRequest(c.errs...)
	e.AdsCode = c.errs[0].Code
	return e
}

// operation checks one operation named name and returns it normalized.
func (c *checker) operation(name string, raw operationJSON) storage.DoNotReachOperation {
	op := storage.DoNotReachOperation{Type: c.operationType(name, raw.OperationType)}
	if raw.Params == nil {
		c.fail(adsx.CodeMissingParameter, name+".params", name+".params is missing")
		return op
	}
	ps, pname := raw.Params, name+".params"
	switch {
	case ps.Users != nil && ps.Emails != nil:
		c.fail(adsx.CodeExclusiveParameters, pname+".emails", pname+".users and "+pname+".emails are exclusive parameters")
	case ps.Emails != nil:
		op.Keys, op.Count = c.emails(pname+".emails", *ps.Emails)
	case ps.Users != nil:
		op.Keys, op.Count = c.users(pname+".users", *ps.Users)
	default:
		c.fail(adsx.CodeMissingParameter, pname+".users", pname+".users is missing")
	}
	op.ExpiresAt = c.expiresAt(pname+".expires_at", ps.ExpiresAt, ps.Emails != nil)
	return op
}

// operationType is Update or Delete (any case, returned as listed).
func (c *checker) operationType(name string, v *string) string {
	name += ".operation_type"
	if v == nil {
		c.fail(adsx.CodeMissingParameter, name, name+" is missing")
		return ""
	}
	for _, t := range storage.DoNotReachOperationTypes {
		if strings.EqualFold(t, *v) {
			return t
		}
	}
	c.fail(adsx.CodeInvalidParameter, name, fmt.Sprintf("Expected enum value of [%s], got %q for %s",
		strings.Join(storage.DoNotReachOperationTypes, ", "), *v, name), *v)
	return ""
}

// users checks the user objects: at least one, each with at least one
// hashed email or phone number. It returns their member keys (each once)
// and how many users there were.
func (c *checker) users(name string, us []userJSON) ([]string, int) {
	if len(us) == 0 {
		c.fail(adsx.CodeInvalidParameter, name, name+" must hold at least one user")
		return nil, 0
	}
	keys := newKeySet()
	for j, u := range us {
		uname := fmt.Sprintf("%s[%d]", name, j)
		if len(u.Email) == 0 && len(u.PhoneNumber) == 0 {
			c.fail(adsx.CodeInvalidParameter, uname, uname+" must carry at least one email or phone_number")
			continue
		}
		c.digests(uname+".email", keyEmail, u.Email, keys)
		c.digests(uname+".phone_number", keyPhone, u.PhoneNumber, keys)
	}
	return keys.list, len(us)
}

// emails checks the emails variant: at least one hashed address.
func (c *checker) emails(name string, es []string) ([]string, int) {
	if len(es) == 0 {
		c.fail(adsx.CodeInvalidParameter, name, name+" must hold at least one hashed email")
		return nil, 0
	}
	keys := newKeySet()
	c.digests(name, keyEmail, es, keys)
	return keys.list, len(es)
}

// digests checks that every value is a SHA-256 hex digest and adds its
// member key (prefix and lowercase hex) to keys.
func (c *checker) digests(name, prefix string, values []string, keys *keySet) {
	for k, v := range values {
		if !validation.IsSHA256Hex(v) {
			vname := fmt.Sprintf("%s[%d]", name, k)
			c.fail(adsx.CodeInvalidParameter, vname, vname+" must be a SHA-256 digest of the normalized value: 64 hexadecimal characters")
			continue
		}
		keys.add(prefix + strings.ToLower(v))
	}
}

// expiresAt is the operation's expiry: ISO 8601, later than now and at
// most 13 months ahead; 13 months ahead when not sent, unless required
// (the emails variant).
func (c *checker) expiresAt(name string, v *string, required bool) time.Time {
	limit := c.now.AddDate(0, maxExpiryMonths, 0)
	if v == nil {
		if required {
			c.fail(adsx.CodeMissingParameter, name, name+" is missing")
		}
		return limit.Truncate(time.Second)
	}
	t, err := parseTime(*v)
	switch {
	case err != nil:
		c.fail(adsx.CodeInvalidParameter, name, fmt.Sprintf("Expected an ISO 8601 time, got %q for %s", *v, name), *v)
	case !t.After(c.now):
		c.fail(adsx.CodeInvalidParameter, name, name+" must be later than the current time", *v)
	case t.After(limit):
		c.fail(adsx.CodeInvalidParameter, name, fmt.Sprintf("%s must be at most %d months ahead", name, maxExpiryMonths), *v)
	}
	return t
}

// parseTime reads an ISO 8601 time with a zone (RFC 3339), in UTC.
func parseTime(v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}

// keySet lists member keys in first-seen order, each once.
type keySet struct {
	seen map[string]struct{}
	list []string
}

func newKeySet() *keySet { return &keySet{seen: map[string]struct{}{}} }

func (s *keySet) add(k string) {
	if _, ok := s.seen[k]; ok {
		return
	}
	s.seen[k] = struct{}{}
	s.list = append(s.list, k)
}
