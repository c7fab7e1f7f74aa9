package news

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/api/objects"
	"github.com/aviary-dev/aviary/domain/posttext"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// Search parameter bounds, as the platform's description gives them.
const (
	maxQueryRunes     = 2048
	defaultMaxResults = 10
	maxMaxResults     = 100
	defaultMaxAge     = 168
	maxMaxAge         = 720
)

// searchRequest is a parsed GET /2/news/search.
type searchRequest struct {
	words      []string
	maxResults int
	maxAge     time.Duration
	fields     httpx.FieldSet
}

// search answers GET /2/news/search: the stories updated within
// max_age_hours whose name, summary or keywords hold every word of the
// query, newest first.
func (m *Module) search(w http.ResponseWriter, r *http.Request) error {
	req, err := parseSearch(r)
	if err != nil {
		return err
	}
	var list []storage.NewsStory
	if len(req.words) > 0 { // a query without a word (punctuation only) matches nothing
		list, err = m.Store.SearchNewsStories(r.Context(), storage.NewsSearch{Words: req.words,
			Since: m.Clock().UTC().Add(-req.maxAge), Limit: req.maxResults})
		if err != nil {
			return fmt.Errorf("search news: %w", err)
		}
	}
	data, err := m.render(r.Context(), list, req.fields, objects.ViewerOf(r))
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, searchResponse{Data: data, Meta: searchMeta{ResultCount: len(data)}})
}

// byID answers GET /2/news/{id}; an unknown story is a 200 with only its
// error, as the other single-object lookups answer.
func (m *Module) byID(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathID(r, "id")
	if err != nil {
		return err
	}
	fields, err := httpx.Fields(r, fieldsParam, Fields)
	if err != nil {
		return err
	}
	s, err := m.Store.NewsStoryByID(r.Context(), id)
	if errors.Is(err, storage.ErrNotFound) {
		e := apierr.NotFound("news", "id", httpx.FormatID(id))
		e.Status = 0
		return httpx.WriteJSON(w, http.StatusOK, singleResponse{Errors: objects.Problems(m.Problems, []*apierr.Error{e})})
	}
	if err != nil {
		return fmt.Errorf("load news story %d: %w", id, err)
	}
	data, err := m.render(r.Context(), []storage.NewsStory{s}, fields, objects.ViewerOf(r))
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, singleResponse{Data: &data[0]})
}

// parseSearch reads a search request; a missing query is answered alone,
// every other parameter problem at once.
func parseSearch(r *http.Request) (searchRequest, error) {
	q, _ := url.ParseQuery(r.URL.RawQuery) // the endpoint's query check refused malformed ones
	raw := q.Get(queryParam)
	if raw == "" {
		return searchRequest{}, apierr.MissingParam(queryParam)
	}
	var errs []apierr.ParamError
	var req searchRequest
	switch n := utf8.RuneCountInString(raw); {
	case !utf8.ValidString(raw):
		errs = append(errs, apierr.Param(queryParam, "The `query` query parameter value must be valid UTF-8", strings.ToValidUTF8(raw, "\uFFFD")))
	case n > maxQueryRunes:
		errs = append(errs, apierr.Param(queryParam, fmt.Sprintf("The `query` query parameter is %d characters long; the longest is %d.", n, maxQueryRunes), raw))
	default:
		req.words = queryWords(raw)
	}
	req.maxResults = intParam(q, maxResultsParam, 1, maxMaxResults, defaultMaxResults, &errs)
	req.maxAge = time.Duration(intParam(q, maxAgeParam, 1, maxMaxAge, defaultMaxAge, &errs)) * time.Hour
	req.fields = Fields.With()
	if q.Has(fieldsParam) {
		items, fieldErrs := validation.FieldList(fieldsParam, q.Get(fieldsParam), Fields.Allowed)
		for _, e := range fieldErrs {
			errs = append(errs, apierr.Param(e.Field, e.Message, e.Values...))
		}
		req.fields = Fields.With(items...)
	}
	if len(errs) > 0 {
		return searchRequest{}, apierr.InvalidRequest(errs...)
	}
	return req, nil
}

// intParam reads an integer parameter in [lo, hi], def when absent,
// reporting a bad one to errs.
func intParam(q url.Values, name string, lo, hi, def int, errs *[]apierr.ParamError) int {
	if !q.Has(name) {
		return def
	}
	raw := q.Get(name)
	n, err := strconv.Atoi(raw)
	if err != nil || n < lo || n > hi || raw[0] < '0' || raw[0] > '9' {
		*errs = append(*errs, apierr.Param(name, fmt.Sprintf("The `%s` query parameter value [%s] is not between %d and %d", name, raw, lo, hi), raw))
		return def
	}
	return n
}

// queryWords are the words a search matches: the query's terms as keyword
// insights count them (posttext.KeywordTerms: lower-cased words of two
// characters or more; "#tag", "$tag" and "@name" without their sign),
// each once, stopwords left out unless the query has nothing else.
func queryWords(query string) []string {
	var words, stop []string
	seen := map[string]bool{}
	for _, t := range posttext.KeywordTerms(query) {
		t = strings.TrimLeft(t, "#$@")
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		if posttext.IsStopword(t) {
			stop = append(stop, t)
		} else {
			words = append(words, t)
		}
	}
	if len(words) == 0 {
		return stop
	}
	return words
}
