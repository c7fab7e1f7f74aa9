package news

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/api/objects"
	"github.com/aviary-dev/aviary/domain/posttext"
	"github.com/aviary-dev/aviary/storage"
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
	q := httpx.ReadQuery(r)
	var req searchRequest
	raw := q.Required(queryParam)
	if n := utf8.RuneCountInString(raw); n > maxQueryRunes {
		q.Fail(queryParam, fmt.Sprintf("The `query` query parameter is %d characters long; the longest is %d.", n, maxQueryRunes), raw)
	} else if raw != "" {
		req.words = queryWords(raw)
	}
	req.maxResults = q.Int(maxResultsParam, 1, maxMaxResults, defaultMaxResults)
	req.maxAge = time.Duration(q.Int(maxAgeParam, 1, maxMaxAge, defaultMaxAge)) * time.Hour
	req.fields = Fields.With(q.List(fieldsParam, Fields.Allowed)...)
	if err := q.Err(); err != nil {
		return searchRequest{}, err
	}
	return req, nil
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
