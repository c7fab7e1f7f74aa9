package targeting_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api/ads/adstest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// historyCount counts the account's TARGETING_CRITERIA history entries of
// one change type.
func historyCount(t *testing.T, s *adstest.Server, accountID, change string) int {
	t.Helper()
	var n int
	s.Scan(t, `SELECT count(*) FROM account_history
		WHERE account_id = $1 AND entity_type = 'TARGETING_CRITERIA' AND change_type = $2`, []any{accountID, change}, &n)
	return n
}

// TestTargetingCriteriaLifecycle: create criteria of several types, list
// them by line item, get, delete (soft), with history entries.
func TestTargetingCriteriaLifecycle(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	_, campaign, li := factory.AdsChain(t, s.DB, acct.ID)
	li2 := factory.LineItem(t, s.DB, acct.ID, campaign)
	aud := ownAudience(t, s, acct.ID)
	base := "/12/accounts/" + acct.ID + "/targeting_criteria"
	creates := []struct {
		li, typ, value, op string
		wantType, wantOp   string
	}{
		{li, "BROAD_KEYWORD", "technology", "", "BROAD_KEYWORD", "EQ"},
		{li, "location", "5122804691e5fecc", "eq", "LOCATION", "EQ"},
		{li, "NEGATIVE_PHRASE_KEYWORD", "debate", "NE", "NEGATIVE_PHRASE_KEYWORD", "NE"},
		{li, "AGE", "AGE_21_TO_34", "GTE", "AGE", "GTE"},
		{li2, "CUSTOM_AUDIENCE", aud, "", "CUSTOM_AUDIENCE", "EQ"},
		{li2, "APP_LIST", "x1", "NE", "APP_LIST", "NE"},
	}
	var ids []string
	for _, c := range creates {
		params := url.Values{"line_item_id": {c.li}, "targeting_type": {c.typ}, "targeting_value": {c.value}}
		if c.op != "" {
			params.Set("operator_type", c.op)
		}
		d := alice.Post(t, base, params).Status(t, http.StatusOK).Data(t)
		if d["targeting_type"] != c.wantType || d["operator_type"] != c.wantOp || d["targeting_value"] != c.value ||
			d["name"] != c.value || d["line_item_id"] != c.li || d["tailored_audience_expansion"] != false || d["deleted"] != false {
			t.Errorf("created %s: %v", c.typ, d)
		}
		ids = append(ids, d["id"].(string))
	}
	if got := alice.Get(t, base, url.Values{"line_item_ids": {li2}}).Status(t, http.StatusOK).List(t); len(got) != 2 {
		t.Errorf("line item 2 has %d criteria, want 2", len(got))
	}
	r := alice.Get(t, base, url.Values{"line_item_ids": {li + "," + li2}, "targeting_criterion_ids": {ids[0] + "," + ids[4]},
		"with_total_count": {"true"}}).Status(t, http.StatusOK)
	if got := r.List(t); len(got) != 2 || got[0]["id"] != ids[0] || r.Body["total_count"] != float64(2) {
		t.Errorf("filtered list = %s", r.Raw)
	}
	alice.Get(t, base+"/"+ids[0], nil).Status(t, http.StatusOK)
	if d := alice.Delete(t, base+"/"+ids[0], nil).Status(t, http.StatusOK).Data(t); d["deleted"] != true {
		t.Errorf("delete answered %v", d)
	}
	alice.Delete(t, base+"/"+ids[0], nil).Fails(t, http.StatusNotFound, "TARGETING_CRITERION_NOT_FOUND", "targeting_criterion_id")
	alice.Get(t, base+"/"+ids[0], nil).Fails(t, http.StatusNotFound, "TARGETING_CRITERION_NOT_FOUND", "targeting_criterion_id")
	alice.Get(t, base+"/"+ids[0], url.Values{"with_deleted": {"true"}}).Status(t, http.StatusOK)
	if got := alice.Get(t, base, url.Values{"line_item_ids": {li}}).Status(t, http.StatusOK).List(t); len(got) != 3 {
		t.Errorf("after delete line item 1 lists %d criteria, want 3", len(got))
	}
	if got := alice.Get(t, base, url.Values{"line_item_ids": {li}, "with_deleted": {"true"}}).Status(t, http.StatusOK).List(t); len(got) != 4 {
		t.Errorf("with_deleted lists %d criteria, want 4", len(got))
	}
	if c, d := historyCount(t, s, acct.ID, "CREATE"), historyCount(t, s, acct.ID, "DELETE"); c != len(creates) || d != 1 {
		t.Errorf("history: %d creates, %d deletes; want %d and 1", c, d, len(creates))
	}
}

// TestTargetingCriteriaRejects: bad input names the parameter and creates
// nothing; an unknown targeting type is UNKNOWN_CRITERIA_TYPE; another
// account's line item or criterion is not found, like a missing one.
func TestTargetingCriteriaRejects(t *testing.T) {
	s := adstest.New(t)
	alice, bob := s.User(t, "alice"), s.User(t, "bob")
	acct := alice.Account(t)
	_, _, li := factory.AdsChain(t, s.DB, acct.ID)
	bobs := bob.Account(t)
	_, _, bobsLI := factory.AdsChain(t, s.DB, bobs.ID)
	bobsTC := bob.Post(t, "/12/accounts/"+bobs.ID+"/targeting_criteria", url.Values{"line_item_id": {bobsLI},
		"targeting_type": {"GENDER"}, "targeting_value": {"1"}}).Status(t, http.StatusOK).Data(t)["id"].(string)
	base := "/12/accounts/" + acct.ID + "/targeting_criteria"
	valid := url.Values{"line_item_id": {li}, "targeting_type": {"LANGUAGE"}, "targeting_value": {"en"}}
	ok := func(kv ...string) url.Values { return adstest.With(valid, kv...) }
	tests := []struct {
		name   string
		params url.Values
		status int
		code   string
		param  string
	}{
		{"missing line item", ok("line_item_id", ""), 400, "MISSING_PARAMETER", "line_item_id"},
		{"missing type", ok("targeting_type", ""), 400, "MISSING_PARAMETER", "targeting_type"},
		{"missing value", ok("targeting_value", ""), 400, "MISSING_PARAMETER", "targeting_value"},
		{"value too long", ok("targeting_value", strings.Repeat("v", 1001)), 400, "INVALID_PARAMETER", "targeting_value"},
		{"unknown operator", ok("operator_type", "LIKE"), 400, "INVALID_PARAMETER", "operator_type"},
		{"unknown type", ok("targeting_type", "HOROSCOPE"), 400, "UNKNOWN_CRITERIA_TYPE", "targeting_type"},
		{"app list not excluded", ok("targeting_type", "APP_LIST"), 400, "INVALID_PARAMETER", "operator_type"},
		{"unknown parameter", ok("name", "x"), 400, "INVALID_PARAMETER", "name"},
		{"missing line item id", ok("line_item_id", "nosuchli"), 404, "LINE_ITEM_NOT_FOUND", "line_item_id"},
		{"another account's line item", ok("line_item_id", bobsLI), 404, "LINE_ITEM_NOT_FOUND", "line_item_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			alice.Post(t, base, tt.params).Fails(t, tt.status, tt.code, tt.param)
		})
	}
	if got := alice.Get(t, base, url.Values{"line_item_ids": {li}, "with_deleted": {"true"}}).Status(t, http.StatusOK).List(t); len(got) != 0 {
		t.Fatalf("refused creates left %d criteria", len(got))
	}
	tooMany := strings.TrimSuffix(strings.Repeat("a,", 201), ",")
	listBad := []struct {
		name   string
		params url.Values
		code   string
		param  string
	}{
		{"line item ids required", nil, "MISSING_PARAMETER", "line_item_ids"},
		{"too many line item ids", url.Values{"line_item_ids": {tooMany}}, "INVALID_PARAMETER", "line_item_ids"},
		{"too many criterion ids", url.Values{"line_item_ids": {li}, "targeting_criterion_ids": {tooMany}}, "INVALID_PARAMETER", "targeting_criterion_ids"},
		{"unknown sort", url.Values{"line_item_ids": {li}, "sort_by": {"name-asc"}}, "INVALID_PARAMETER", "sort_by"},
		{"count too big", url.Values{"line_item_ids": {li}, "count": {"1001"}}, "INVALID_PARAMETER", "count"},
	}
	for _, tt := range listBad {
		t.Run(tt.name, func(t *testing.T) {
			alice.Get(t, base, tt.params).Fails(t, http.StatusBadRequest, tt.code, tt.param)
		})
	}
	if got := alice.Get(t, base, url.Values{"line_item_ids": {bobsLI}}).Status(t, http.StatusOK).List(t); len(got) != 0 {
		t.Fatalf("another account's line item lists %d criteria", len(got))
	}
	theirs := alice.Get(t, base+"/"+bobsTC, nil)
	theirs.Fails(t, http.StatusNotFound, "TARGETING_CRITERION_NOT_FOUND", "targeting_criterion_id")
	none := alice.Get(t, base+"/nosuchtc", nil)
	if strings.ReplaceAll(theirs.Raw, bobsTC, "ID") != strings.ReplaceAll(none.Raw, "nosuchtc", "ID") {
		t.Errorf("answers differ:\n%s\n%s", theirs.Raw, none.Raw)
	}
	alice.Delete(t, base+"/"+bobsTC, nil).Fails(t, http.StatusNotFound, "TARGETING_CRITERION_NOT_FOUND", "targeting_criterion_id")
	bob.Get(t, "/12/accounts/"+bobs.ID+"/targeting_criteria/"+bobsTC, nil).Status(t, http.StatusOK)
	alice.Get(t, "/12/accounts/"+bobs.ID+"/targeting_criteria", url.Values{"line_item_ids": {bobsLI}}).
		Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
	if n := historyCount(t, s, acct.ID, "CREATE"); n != 0 {
		t.Fatalf("refused creates wrote %d history entries", n)
	}
}
