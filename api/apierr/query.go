package apierr

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ParseQuery parses a raw query string like url.ParseQuery, but a pair it
// cannot decode (a bad %-escape, a ';' separator) is an invalid-request
// error naming that parameter. (url.URL.Query drops such a pair silently,
// so `?type=%zz` would read as a missing type.)
func ParseQuery(rawQuery string) (url.Values, error) {
	if rawQuery == "" {
		return nil, nil // reads of a nil url.Values find nothing, as of an empty one
	}
	values, err := url.ParseQuery(rawQuery)
	if err == nil {
		return values, nil
	}
	var errs []ParamError
	for pair := range strings.SplitSeq(rawQuery, "&") {
		if pe, bad := malformedPair(pair); bad {
			errs = append(errs, pe)
		}
	}
	if len(errs) == 0 { // not a pair's fault (for example too many parameters)
		return nil, InvalidParam("query", fmt.Sprintf("The query string is malformed: %v", err))
	}
	return nil, InvalidRequest(errs...)
}

// malformedPair reports the invalid-request entry of one name=value pair
// of a query string that url.ParseQuery rejects; false when it is fine.
func malformedPair(pair string) (ParamError, bool) {
	rawName, rawValue, _ := strings.Cut(pair, "=")
	name, err := url.QueryUnescape(rawName)
	if err == nil && strings.Contains(rawName, ";") {
		err = errors.New("invalid semicolon separator in query")
	}
	if err != nil {
		return Param(rawName, fmt.Sprintf("The query parameter name [%s] is malformed: %v", rawName, err), rawName), true
	}
	if _, err := url.QueryUnescape(rawValue); err != nil {
		return Param(name, fmt.Sprintf("The `%s` query parameter value is malformed: %v", name, err), rawValue), true
	}
	if strings.Contains(rawValue, ";") {
		return Param(name, fmt.Sprintf("The `%s` query parameter value is malformed: ';' is not a separator; escape it as %%3B", name), rawValue), true
	}
	return ParamError{}, false
}
