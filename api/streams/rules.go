package streams

import (
	"bytes"
	"context"
	"encoding/base32"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/domain/streamrules"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// RulesStore is the record access of the rules endpoints.
type RulesStore interface {
	AddStreamRules(ctx context.Context, a storage.StreamRuleAdd) (storage.StreamRulesAdded, error)
	DeleteStreamRules(ctx context.Context, d storage.StreamRuleDelete) ([]storage.StreamRule, error)
	StreamRules(ctx context.Context, f storage.StreamRuleFilter) ([]storage.StreamRule, error)
}

// rulesPath is where the rules are served.
const rulesPath = "/2/tweets/search/stream/rules"

// maxListed is the most rules GET returns per page, and the most ids it
// takes (the description's bounds).
const maxListed = 1000

// MaxTagLength is the longest rule tag, in characters (code points). The
// platform documents no bound; a tag rides in every match on the bus, in
// the dispatcher's rule set and on every stream line, so Aviary bounds it
// (docs/streams-rules.md).
const MaxTagLength = 255

// ruleRoutes lists the rules endpoints: app-only bearer tokens, as on the
// platform; every call sees and changes only its app's rules. Limits per
// 15 minutes per app: 450 changes and 450 lists.
func (m *Module) ruleRoutes() []httpx.Endpoint {
	return []httpx.Endpoint{
		{Pattern: "POST " + rulesPath, Auth: auth.BearerOnly.Writes(),
			Limit: httpx.Limit{Name: "stream_rules_update", Requests: 450, Scope: httpx.PerApp},
			Query: []string{"dry_run", "delete_all"}, Body: httpx.JSONBody(httpx.DefaultMaxBody), Handle: m.updateRules},
		{Pattern: "GET " + rulesPath, Auth: auth.BearerOnly,
			Limit: httpx.Limit{Name: "stream_rules_list", Requests: 450, Scope: httpx.PerApp},
			Query: []string{"ids", "max_results", "pagination_token"}, Handle: m.listRules},
	}
}

// ruleObject is a rule as the API shows it.
type ruleObject struct {
	ID    string `json:"id"`
	Value string `json:"value"`
	Tag   string `json:"tag,omitempty"`
}

func renderRule(r storage.StreamRule) ruleObject {
	return ruleObject{ID: httpx.FormatID(r.ID), Value: r.Value, Tag: r.Tag}
}

// updateRequest is the POST body: add, or delete (by ids and/or values).
type updateRequest struct {
	Add    []addRule    `json:"add"`
	Delete *deleteRules `json:"delete"`
}

type addRule struct {
	Value string `json:"value"`
	Tag   string `json:"tag"`
}

type deleteRules struct {
	IDs    []string `json:"ids"`
	Values []string `json:"values"`
}

// summary is meta.summary of a POST: the add counts or the delete counts.
type summary struct {
	Created    *int `json:"created,omitempty"`
	NotCreated *int `json:"not_created,omitempty"`
	Valid      *int `json:"valid,omitempty"`
	Invalid    *int `json:"invalid,omitempty"`
	Deleted    *int `json:"deleted,omitempty"`
	NotDeleted *int `json:"not_deleted,omitempty"`
}

type updateMeta struct {
	Sent    string  `json:"sent"`
	Summary summary `json:"summary"`
}

type updateResponse struct {
	Data   []ruleObject     `json:"data,omitempty"`
	Meta   updateMeta       `json:"meta"`
	Errors []map[string]any `json:"errors,omitempty"`
}

func count(n int) *int { return &n }

// updateParams are POST's query flags.
type updateParams struct {
	dryRun, deleteAll bool
}

func readUpdateParams(r *http.Request) (updateParams, error) {
	q := httpx.ReadQuery(r)
	bools := []string{"true", "false"}
	p := updateParams{
		dryRun:    q.Enum("dry_run", bools, "false") == "true",
		deleteAll: q.Enum("delete_all", bools, "false") == "true",
	}
	return p, q.Err()
}

func (m *Module) updateRules(w http.ResponseWriter, r *http.Request) error {
	p, err := readUpdateParams(r)
	if err != nil {
		return err
	}
	req, err := m.readUpdate(r, p.deleteAll)
	if err != nil {
		return err
	}
	app := httpx.Principal(r).App
	switch {
	case p.deleteAll:
		return m.deleteRules(w, r, storage.StreamRuleDelete{AppID: app.ID, All: true, DryRun: p.dryRun}, nil, nil)
	case req.Delete != nil:
		ids, err := ruleIDs(req.Delete.IDs)
		if err != nil {
			return err
		}
		values := make([]string, len(req.Delete.Values)) // stored values are trimmed
		for i, v := range req.Delete.Values {
			values[i] = strings.TrimSpace(v)
		}
		d := storage.StreamRuleDelete{AppID: app.ID, IDs: ids, Values: values, DryRun: p.dryRun}
		return m.deleteRules(w, r, d, req.Delete.IDs, req.Delete.Values)
	}
	return m.addRules(w, r, app.ID, req.Add, p.dryRun)
}

// readUpdate reads the body and checks that it asks for exactly one of
// add, delete and (with delete_all=true, which may come without a body)
// delete all.
func (m *Module) readUpdate(r *http.Request, deleteAll bool) (updateRequest, error) {
	var req updateRequest
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return req, httpx.BodyReadError(r.Context(), err)
	}
	if len(bytes.TrimSpace(body)) > 0 || !deleteAll {
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err := httpx.Bind(r, m.Validator, &req); err != nil {
			return req, err
		}
	}
	asked := 0
	for _, set := range []bool{req.Add != nil, req.Delete != nil, deleteAll} {
		if set {
			asked++
		}
	}
	switch {
	case asked != 1:
		return req, apierr.InvalidParam("body", "Exactly one of `add`, `delete` or the `delete_all=true` query parameter must be given.")
	case req.Add != nil && len(req.Add) == 0:
		return req, apierr.InvalidParam("add", "`add` must list at least one rule.")
	case req.Delete != nil && len(req.Delete.IDs) == 0 && len(req.Delete.Values) == 0:
		return req, apierr.InvalidParam("delete", "`delete` must list at least one rule id in `ids` or value in `values`.")
	}
	for i := range req.Add {
		// White space around a value is not part of the rule (docs/streams-rules.md).
		req.Add[i].Value = strings.TrimSpace(req.Add[i].Value)
		a := req.Add[i]
		if a.Value == "" {
			return req, apierr.InvalidParam("value", "Every rule of `add` needs a non-empty `value`.")
		}
		if n := utf8.RuneCountInString(a.Tag); n > MaxTagLength {
			return req, apierr.InvalidParam("tag", fmt.Sprintf("A rule's `tag` may hold at most %d characters, not %d.", MaxTagLength, n))
		}
	}
	return req, nil
}

// ruleIDs parses the ids of a delete.
func ruleIDs(raw []string) ([]int64, error) {
	ids := make([]int64, 0, len(raw))
	var errs []apierr.ParamError
	for _, s := range raw {
		id, ok := validation.ParseID(s)
		if !ok {
			errs = append(errs, apierr.Param("ids", fmt.Sprintf("The `ids` value [%s] of `delete` is not a rule id (1 to 19 digits)", s), s))
			continue
		}
		ids = append(ids, id)
	}
	if len(errs) > 0 {
		return nil, apierr.InvalidRequest(errs...)
	}
	return ids, nil
}

// ruleProblem renders a rule the add refused, embedded in errors.
func (m *Module) ruleProblem(value string, err error) map[string]any {
	var re *streamrules.Error
	slug, reason := apierr.SlugInvalidRules, err.Error()
	if errors.As(err, &re) && re.Kind == streamrules.Noncompliant {
		slug = apierr.SlugNoncompliantRules
	}
	body := m.Problems.ProblemJSON(&apierr.Error{Slug: slug, Title: "UnprocessableEntity", Detail: reason})
	body["value"] = value
	body["details"] = []string{reason}
	return body
}

// addRules checks every rule, then adds them all (but duplicates) or none:
// a rule the stream refuses leaves every rule of the request uncreated,
// and the response lists each refused one.
func (m *Module) addRules(w http.ResponseWriter, r *http.Request, appID int64, add []addRule, dryRun bool) error {
	var refused []map[string]any
	rules := make([]storage.NewStreamRule, len(add))
	for i, a := range add {
		if err := streamrules.CheckLength(a.Value, m.RuleMaxLength); err != nil {
			refused = append(refused, m.ruleProblem(a.Value, err))
		}
		rules[i] = storage.NewStreamRule{Value: a.Value, Tag: a.Tag}
	}
	sent := httpx.FormatTime(m.Clock())
	if len(refused) > 0 {
		meta := updateMeta{Sent: sent, Summary: summary{Created: count(0), NotCreated: count(len(add)),
			Valid: count(len(add) - len(refused)), Invalid: count(len(refused))}}
		return httpx.WriteJSON(w, http.StatusOK, updateResponse{Meta: meta, Errors: refused})
	}
	added, err := m.Store.AddStreamRules(r.Context(), storage.StreamRuleAdd{AppID: appID, Rules: rules, Max: m.RulesMax, DryRun: dryRun})
	if errors.Is(err, storage.ErrStreamRuleCap) {
		return apierr.RuleCap(fmt.Sprintf("Rule cap reached: an app may hold at most %d rules; delete rules before adding more.", m.RulesMax))
	}
	if err != nil {
		return fmt.Errorf("add stream rules of app %d: %w", appID, err)
	}
	resp := updateResponse{Meta: updateMeta{Sent: sent, Summary: summary{Created: count(len(added.Created)),
		NotCreated: count(len(added.Duplicates)), Valid: count(len(added.Created)), Invalid: count(len(added.Duplicates))}}}
	for _, c := range added.Created {
		resp.Data = append(resp.Data, renderRule(c))
	}
	for _, d := range added.Duplicates {
		e := apierr.DuplicateRules(httpx.FormatID(d.Existing.ID), add[d.Index].Value)
		e.Status, e.Title, e.Detail = 0, "DuplicateRule", ""
		resp.Errors = append(resp.Errors, m.Problems.ProblemJSON(e))
	}
	if !dryRun && len(added.Created) > 0 {
		m.Logger.InfoContext(r.Context(), "stream rules added", "app_id", appID, "created", len(added.Created))
	}
	return httpx.WriteJSON(w, addStatus(len(added.Created)), resp)
}

// addStatus is the status of an add that was not refused: 201 when it
// created rules (or would have, in a dry run), as the platform answers and
// its clients check (go-twitter's add fails on anything else; the
// platform's sample code tests for 201), although the OpenAPI description
// lists only 200; 200 when every rule was a duplicate.
func addStatus(created int) int {
	if created > 0 {
		return http.StatusCreated
	}
	return http.StatusOK
}

// deleteRules deletes what d names; ids and values of no rule of the app
// are reported in errors as not found.
func (m *Module) deleteRules(w http.ResponseWriter, r *http.Request, d storage.StreamRuleDelete, ids, values []string) error {
	deleted, err := m.Store.DeleteStreamRules(r.Context(), d)
	if err != nil {
		return fmt.Errorf("delete stream rules of app %d: %w", d.AppID, err)
	}
	resp := updateResponse{}
	for _, id := range ids {
		if !slices.ContainsFunc(deleted, func(r storage.StreamRule) bool { return httpx.FormatID(r.ID) == id }) {
			resp.Errors = append(resp.Errors, m.notDeleted("ids", id))
		}
	}
	for _, v := range values {
		if !slices.ContainsFunc(deleted, func(r storage.StreamRule) bool { return r.Value == strings.TrimSpace(v) }) {
			resp.Errors = append(resp.Errors, m.notDeleted("values", v))
		}
	}
	resp.Meta = updateMeta{Sent: httpx.FormatTime(m.Clock()), Summary: summary{Deleted: count(len(deleted)), NotDeleted: count(len(resp.Errors))}}
	if !d.DryRun && len(deleted) > 0 {
		m.Logger.InfoContext(r.Context(), "stream rules deleted", "app_id", d.AppID, "deleted", len(deleted))
	}
	return httpx.WriteJSON(w, http.StatusOK, resp)
}

// notDeleted is the problem of an id or value the app has no rule of.
func (m *Module) notDeleted(param, value string) map[string]any {
	e := apierr.NotFound("rule", param, value)
	e.Status = 0
	body := m.Problems.ProblemJSON(e)
	body["details"] = []string{"Rule does not exist"}
	return body
}

// listMeta is GET's meta.
type listMeta struct {
	Sent        string `json:"sent"`
	ResultCount int    `json:"result_count"`
	NextToken   string `json:"next_token,omitempty"`
}

type listResponse struct {
	Data []ruleObject `json:"data,omitempty"`
	Meta listMeta     `json:"meta"`
}

func (m *Module) listRules(w http.ResponseWriter, r *http.Request) error {
	q := httpx.ReadQuery(r)
	var ids []int64
	if q.Has("ids") {
		ids = q.IDs("ids", maxListed, "ids")
	}
	limit := q.Int("max_results", 1, maxListed, maxListed)
	var after int64
	if tok, ok := q.String("pagination_token"); ok {
		var valid bool
		if after, valid = decodePageToken(tok); !valid {
			q.Fail("pagination_token", fmt.Sprintf("The `pagination_token` query parameter value [%s] is not a token this endpoint gave out", tok), tok)
		}
	}
	if err := q.Err(); err != nil {
		return err
	}
	app := httpx.Principal(r).App
	rules, err := m.Store.StreamRules(r.Context(), storage.StreamRuleFilter{AppID: app.ID, IDs: ids, After: after, Limit: limit + 1})
	if err != nil {
		return fmt.Errorf("list stream rules of app %d: %w", app.ID, err)
	}
	resp := listResponse{Meta: listMeta{Sent: httpx.FormatTime(m.Clock())}}
	if len(rules) > limit {
		rules = rules[:limit]
		resp.Meta.NextToken = encodePageToken(rules[len(rules)-1].ID)
	}
	for _, rule := range rules {
		resp.Data = append(resp.Data, renderRule(rule))
	}
	resp.Meta.ResultCount = len(resp.Data)
	return httpx.WriteJSON(w, http.StatusOK, resp)
}

// Page tokens are 16 base32hex characters (the description's form): the
// id the page ended at and two check bytes.
var pageEncoding = base32.HexEncoding.WithPadding(base32.NoPadding)

const pageCheck = 0xa5c3

func encodePageToken(id int64) string {
	var b [10]byte
	binary.BigEndian.PutUint64(b[:8], uint64(id))
	binary.BigEndian.PutUint16(b[8:], pageCheck)
	return pageEncoding.EncodeToString(b[:])
}

func decodePageToken(tok string) (int64, bool) {
	b, err := pageEncoding.DecodeString(tok)
	if err != nil || len(b) != 10 || binary.BigEndian.Uint16(b[8:]) != pageCheck {
		return 0, false
	}
	id := int64(binary.BigEndian.Uint64(b[:8]))
	if id <= 0 || encodePageToken(id) != tok { // one spelling per token (docs/fuzzing.md)
		return 0, false
	}
	return id, true
}
