package render

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// ParseTweetQuery reads the options of a query string the API validated
// and stored (a webhook stream link's, see CanonicalQuery), without a
// request. A parameter that is not one of TweetParams or is repeated, a
// list that is empty, and a name a list may not hold are reported in one
// plain error; the options of the names it knows are returned with it.
func ParseTweetQuery(query string) (Options, error) {
	values, err := url.ParseQuery(query)
	if err != nil {
		return Options{}, fmt.Errorf("render: query %q: %w", query, err)
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(values)) {
		switch {
		case !slices.Contains(TweetParams, name):
			errs = append(errs, fmt.Errorf("unknown parameter %s", name))
		case len(values[name]) > 1:
			errs = append(errs, fmt.Errorf("parameter %s given %d times", name, len(values[name])))
		}
	}
	o := TweetOptions(func(param string, allowed []string) []string {
		if !values.Has(param) {
			return nil
		}
		items, bad := splitList(values.Get(param), allowed)
		if len(bad) > 0 {
			errs = append(errs, fmt.Errorf("%s: unknown names %s", param, strings.Join(bad, ",")))
		}
		return items
	})
	if err := errors.Join(errs...); err != nil {
		return o, fmt.Errorf("render: query %q: %w", query, err)
	}
	return o, nil
}

// splitList splits a comma-separated list into the names allowed holds,
// each once in first-seen order, and the names it does not hold (an empty
// list is one empty name).
func splitList(value string, allowed []string) (items, bad []string) {
	for _, item := range strings.Split(value, ",") {
		switch {
		case !slices.Contains(allowed, item):
			bad = append(bad, item)
		case !slices.Contains(items, item):
			items = append(items, item)
		}
	}
	return items, bad
}

// CanonicalQuery is the query string of the fields and expansions values
// asks for (values as parsed from a request the API validated; parameters
// other than TweetParams are left out): parameter names sorted, each list
// with its names in the order sent, each once. Equal requests give equal
// strings, and ParseTweetQuery reads one back into the request's options.
// Names and list items are query-escaped (validated ones need no escape).
func CanonicalQuery(values url.Values) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(values)) {
		if !slices.Contains(TweetParams, name) || len(values[name]) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(name))
		b.WriteByte('=')
		var seen []string
		for _, item := range strings.Split(values[name][0], ",") {
			if slices.Contains(seen, item) {
				continue
			}
			if len(seen) > 0 {
				b.WriteByte(',')
			}
			seen = append(seen, item)
			b.WriteString(url.QueryEscape(item))
		}
	}
	return b.String()
}
