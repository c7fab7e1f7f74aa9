package adsx

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/storage"
)

// request builds a GET carrying query, routed on pattern with path values.
func newRequest(t *testing.T, pattern, query string, path map[string]string) *http.Request {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, "/x?"+query, nil)
	r.Pattern = pattern
	for k, v := range path {
		r.SetPathValue(k, v)
	}
	return r
}

func params(t *testing.T, query string, allowed ...string) *Params {
	t.Helper()
	p, err := readParams(newRequest(t, "GET /12/accounts/{account_id}/things", query, map[string]string{"account_id": "a1"}), allowed)
	if err != nil {
		t.Fatalf("readParams(%q): %v", query, err)
	}
	return p
}

// firstError returns the code and parameter of p's first error.
func firstError(t *testing.T, p *Params) (code, param string) {
	t.Helper()
	err := p.Err()
	if err == nil {
		return "", ""
	}
	e := err.(*apierr.Error)
	for name := range e.Params[0].Parameters {
		param = name
	}
	return e.Params[0].Code, param
}

func TestGetters(t *testing.T) {
	statuses := []string{"ACTIVE", "PAUSED"}
	cases := []struct {
		name, query string
		read        func(p *Params) any
		want        any
		code        string
	}{
		{"required present", "name=abc", func(p *Params) any { return p.Required("name", 5) }, "abc", ""},
		{"required missing", "", func(p *Params) any { return p.Required("name", 5) }, "", CodeMissingParameter},
		{"required empty", "name=", func(p *Params) any { return p.Required("name", 5) }, "", CodeInvalidParameter},
		{"string too long", "name=abcdef", func(p *Params) any { return p.String("name", 5) }, (*string)(nil), CodeInvalidParameter},
		{"string counts characters", "name=" + url.QueryEscape("ééééé"), func(p *Params) any { return *p.String("name", 5) }, "ééééé", ""},
		{"string invalid utf8", "name=%ff", func(p *Params) any { return p.String("name", 5) }, (*string)(nil), CodeInvalidParameter},
		{"int", "count=7", func(p *Params) any { return *p.Int("count", 1, 10) }, 7, ""},
		{"int not a number", "count=x", func(p *Params) any { return p.Int("count", 1, 10) }, (*int)(nil), CodeInvalidParameter},
		{"int below", "count=0", func(p *Params) any { return p.Int("count", 1, 10) }, (*int)(nil), CodeInvalidParameter},
		{"int above", "count=11", func(p *Params) any { return p.Int("count", 1, 10) }, (*int)(nil), CodeInvalidParameter},
		{"int64 overflow", "n=99999999999999999999", func(p *Params) any { return p.Int64("n", 0, 1<<62) }, (*int64)(nil), CodeInvalidParameter},
		{"bool any case", "b=TRUE", func(p *Params) any { return *p.Bool("b") }, true, ""},
		{"bool bad", "b=yes", func(p *Params) any { return p.Bool("b") }, (*bool)(nil), CodeInvalidParameter},
		{"flag default", "", func(p *Params) any { return p.Flag("b", true) }, true, ""},
		{"enum canonical case", "s=paused", func(p *Params) any { return *p.Enum("s", statuses) }, "PAUSED", ""},
		{"enum unknown", "s=RUNNING", func(p *Params) any { return p.Enum("s", statuses) }, (*string)(nil), CodeInvalidParameter},
		{"required enum missing", "", func(p *Params) any { return p.RequiredEnum("s", statuses) }, "", CodeMissingParameter},
		{"enum list", "s=active,PAUSED", func(p *Params) any { return strings.Join(p.EnumList("s", statuses, 0), "|") }, "ACTIVE|PAUSED", ""},
		{"enum list unknown", "s=ACTIVE,X", func(p *Params) any { return len(p.EnumList("s", statuses, 0)) }, 0, CodeInvalidParameter},
		{"ids", "ids=a1,b2", func(p *Params) any { return strings.Join(p.IDs("ids"), "|") }, "a1|b2", ""},
		{"ids 200", "ids=" + strings.Repeat("a,", 199) + "a", func(p *Params) any { return len(p.IDs("ids")) }, 200, ""},
		{"ids 201", "ids=" + strings.Repeat("a,", 200) + "a", func(p *Params) any { return len(p.IDs("ids")) }, 0, CodeInvalidParameter},
		{"ids empty entry", "ids=a,,b", func(p *Params) any { return len(p.IDs("ids")) }, 0, CodeInvalidParameter},
		{"ids bad characters", "ids=a%20b", func(p *Params) any { return len(p.IDs("ids")) }, 0, CodeInvalidParameter},
		{"id", "id=a1_B-2", func(p *Params) any { return *p.ID("id") }, "a1_B-2", ""},
		{"id absent", "", func(p *Params) any { return p.ID("id") }, (*string)(nil), ""},
		{"id 64 chars", "id=" + strings.Repeat("a", 64), func(p *Params) any { return *p.ID("id") }, strings.Repeat("a", 64), ""},
		{"id 65 chars", "id=" + strings.Repeat("a", 65), func(p *Params) any { return p.ID("id") }, (*string)(nil), CodeInvalidParameter},
		{"id empty", "id=", func(p *Params) any { return p.ID("id") }, (*string)(nil), CodeInvalidParameter},
		{"id list", "id=a1,b2", func(p *Params) any { return p.ID("id") }, (*string)(nil), CodeInvalidParameter},
		{"id bad characters", "id=a%20b", func(p *Params) any { return p.ID("id") }, (*string)(nil), CodeInvalidParameter},
		{"id sql", "id=" + url.QueryEscape("' OR 1=1"), func(p *Params) any { return p.ID("id") }, (*string)(nil), CodeInvalidParameter},
		{"id invalid utf8", "id=%ff", func(p *Params) any { return p.ID("id") }, (*string)(nil), CodeInvalidParameter},
		{"id NUL", "id=a%00", func(p *Params) any { return p.ID("id") }, (*string)(nil), CodeInvalidParameter},
		{"time", "t=2026-01-02T03:00:00Z", func(p *Params) any { return p.Time("t").Format(time.RFC3339) }, "2026-01-02T03:00:00Z", ""},
		{"time offset to UTC", "t=2026-01-02T03:00:00%2B02:00", func(p *Params) any { return p.Time("t").Format(time.RFC3339) }, "2026-01-02T01:00:00Z", ""},
		{"time bad", "t=yesterday", func(p *Params) any { return p.Time("t") }, (*time.Time)(nil), CodeInvalidParameter},
		{"required time missing", "", func(p *Params) any { return p.RequiredTime("t").IsZero() }, true, CodeMissingParameter},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := params(t, tc.query)
			got := tc.read(p)
			if !equal(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
			if code, _ := firstError(t, p); code != tc.code {
				t.Errorf("error code %q, want %q (%v)", code, tc.code, p.Err())
			}
		})
	}
}

func equal(a, b any) bool {
	switch av := a.(type) {
	case *string:
		bv, ok := b.(*string)
		return ok && av == nil && bv == nil
	case *int:
		bv, ok := b.(*int)
		return ok && av == nil && bv == nil
	case *int64:
		bv, ok := b.(*int64)
		return ok && av == nil && bv == nil
	case *bool:
		bv, ok := b.(*bool)
		return ok && av == nil && bv == nil
	case *time.Time:
		bv, ok := b.(*time.Time)
		return ok && av == nil && bv == nil
	}
	return a == b
}

func TestErrorsAreAllReportedWithTheirCodes(t *testing.T) {
	p := params(t, "count=x")
	p.Int("count", 1, 10)
	p.Required("name", 0)
	err := p.Err().(*apierr.Error)
	if err.Status != http.StatusBadRequest || len(err.Params) != 2 || err.AdsCode != CodeInvalidParameter {
		t.Fatalf("error %+v", err)
	}
	if err.Params[1].Code != CodeMissingParameter {
		t.Fatalf("second entry code %q, want MISSING_PARAMETER", err.Params[1].Code)
	}
}

func TestEchoHoldsPathAndParsedValues(t *testing.T) {
	p := params(t, "count=5&ids=a,b&s=paused")
	p.Int("count", 1, 10)
	p.IDs("ids")
	p.Enum("s", []string{"PAUSED"})
	echo := p.Echo()
	if echo["account_id"] != "a1" || echo["count"] != int64(5) || echo["s"] != "PAUSED" || len(echo["ids"].([]string)) != 2 {
		t.Fatalf("echo %v", echo)
	}
}

func TestFormBody(t *testing.T) {
	allowed := []string{"name", "count"}
	cases := []struct {
		name, query, body string
		wantErr           bool
	}{
		{"form only", "", "name=x", false},
		{"query and form", "count=1", "name=x", false},
		{"unknown form key", "", "nme=x", true},
		{"repeated in form", "", "name=x&name=y", true},
		{"once in each", "name=x", "name=y", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/12/x?"+tc.query, strings.NewReader(tc.body))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			p, err := readParams(r, allowed)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if err == nil && *p.String("name", 0) != "x" {
				t.Fatalf("name not read from the form")
			}
		})
	}
}

func TestList(t *testing.T) {
	cursors, err := NewCursors([]byte(strings.Repeat("k", 32)))
	if err != nil {
		t.Fatal(err)
	}
	kit := Kit{Cursors: cursors}
	spec := ListSpec{
		Sortable: Sortable{"name", "created_at"},
		Default:  storage.Sort{Field: "created_at"},
	}
	all := append([]string{"q"}, ListParams...)
	first := params(t, "q=ab&sort_by=name-desc", all...)
	kit.List(first, spec)
	cursor := cursors.encode(storage.Position{Value: "m", ID: "id9"}, first.fingerprint)
	cases := []struct {
		name, query string
		code, param string
		check       func(storage.ListOptions) bool
	}{
		{"defaults", "", "", "", func(o storage.ListOptions) bool {
			return o.Count == 200 && o.Sort.Field == "created_at" && !o.Sort.Desc && o.After == nil && !o.WithDeleted && !o.WithTotal
		}},
		{"count max", "count=1000", "", "", func(o storage.ListOptions) bool { return o.Count == 1000 }},
		{"count over", "count=1001", CodeInvalidParameter, "count", nil},
		{"count zero", "count=0", CodeInvalidParameter, "count", nil},
		{"sort desc", "sort_by=name-desc", "", "", func(o storage.ListOptions) bool { return o.Sort.Field == "name" && o.Sort.Desc }},
		{"sort unknown attribute", "sort_by=budget-asc", CodeInvalidParameter, "sort_by", nil},
		{"sort no direction", "sort_by=name", CodeInvalidParameter, "sort_by", nil},
		{"sort bad direction", "sort_by=name-up", CodeInvalidParameter, "sort_by", nil},
		{"cursor of the same query", "q=ab&sort_by=name-desc&count=5&cursor=" + cursor, "", "", func(o storage.ListOptions) bool {
			return o.After != nil && o.After.Value == "m" && o.After.ID == "id9" && o.Count == 5
		}},
		{"cursor of another filter", "q=zz&sort_by=name-desc&cursor=" + cursor, CodeInvalidParameter, "cursor", nil},
		{"cursor of another sort", "q=ab&sort_by=name-asc&cursor=" + cursor, CodeInvalidParameter, "cursor", nil},
		{"cursor tampered", "q=ab&sort_by=name-desc&cursor=" + tamper(cursor), CodeInvalidParameter, "cursor", nil},
		{"cursor garbage", "cursor=abc", CodeInvalidParameter, "cursor", nil},
		{"total with cursor", "q=ab&sort_by=name-desc&with_total_count=true&cursor=" + cursor, CodeExclusiveParameters, "cursor", nil},
		{"total and deleted", "with_total_count=true&with_deleted=true", "", "", func(o storage.ListOptions) bool { return o.WithTotal && o.WithDeleted }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := params(t, tc.query, all...)
			p.String("q", 0)
			opts := kit.List(p, spec)
			code, param := firstError(t, p)
			if code != tc.code || param != tc.param {
				t.Fatalf("error %q on %q, want %q on %q", code, param, tc.code, tc.param)
			}
			if tc.check != nil && !tc.check(opts) {
				t.Fatalf("options %+v", opts)
			}
		})
	}
}

// tamper changes one character of the cursor's payload.
func tamper(cursor string) string {
	b := []byte(cursor)
	if b[2] == 'A' {
		b[2] = 'B'
	} else {
		b[2] = 'A'
	}
	return string(b)
}

func TestNewCursorsNeedsAKey(t *testing.T) {
	if _, err := NewCursors(make([]byte, 16)); err == nil {
		t.Fatal("a 16-byte key was accepted")
	}
}

// TestIDNamesTheParameter: a refused single id names its parameter and is
// not echoed; an accepted one is.
func TestIDNamesTheParameter(t *testing.T) {
	for _, q := range []string{"campaign_id=a,b", "campaign_id=" + strings.Repeat("x", 65), "campaign_id=a%2Fb"} {
		p := params(t, q)
		if got := p.ID("campaign_id"); got != nil {
			t.Errorf("%s: got %q", q, *got)
		}
		if code, param := firstError(t, p); code != CodeInvalidParameter || param != "campaign_id" {
			t.Errorf("%s: error %s on %q, want INVALID_PARAMETER on campaign_id", q, code, param)
		}
		if _, ok := p.Echo()["campaign_id"]; ok {
			t.Errorf("%s: refused id echoed", q)
		}
	}
	p := params(t, "campaign_id=c1")
	if got := p.ID("campaign_id"); got == nil || *got != "c1" || p.Echo()["campaign_id"] != "c1" || p.Err() != nil {
		t.Errorf("campaign_id=c1: got %v, echo %v, err %v", got, p.Echo(), p.Err())
	}
}

// TestMessagesSayWhatIsWrong: a refusal names the defect the value has
// (NUL is valid UTF-8; a -24:00 offset is a well-formed time of no place).
func TestMessagesSayWhatIsWrong(t *testing.T) {
	cases := []struct {
		name, query  string
		read         func(p *Params) any
		want, refute string // in the message / not in it
	}{
		{"NUL", "name=a%00b", func(p *Params) any { return p.String("name", 5) }, "NUL", "UTF-8"},
		{"NUL in a list", "l=a,b%00", func(p *Params) any { return p.List("l", 5) }, "NUL", "UTF-8"},
		{"invalid UTF-8", "name=a%ffb", func(p *Params) any { return p.String("name", 5) }, "UTF-8", "NUL"},
		{"offset -24:00", "t=2024-01-01T00:00:00-24:00", func(p *Params) any { return p.Time("t") }, "-24:00", ""},
		{"offset +23:59", "t=2024-01-01T00:00:00%2B23:59", func(p *Params) any { return p.Time("t") }, "+23:59", ""},
		{"offset -12:01", "t=2024-01-01T00:00:00-12:01", func(p *Params) any { return p.Time("t") }, "-12:00 to +14:00", ""},
		{"offset +14:01 basic form", "t=2024-01-01T00:00:00%2B1401", func(p *Params) any { return p.RequiredTime("t") }, "+14:01", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := params(t, tc.query)
			tc.read(p)
			err, _ := p.Err().(*apierr.Error)
			if err == nil {
				t.Fatalf("accepted")
			}
			msg := err.Params[0].Message
			if !strings.Contains(msg, tc.want) || tc.refute != "" && strings.Contains(msg, tc.refute) {
				t.Errorf("message %q: want %q in it, not %q", msg, tc.want, tc.refute)
			}
		})
	}
	for _, ok := range []string{"2024-01-01T00:00:00-12:00", "2024-01-01T00:00:00%2B14:00", "2024-01-01T00:00:00%2B05:45"} {
		if p := params(t, "t="+ok); p.Time("t") == nil || p.Err() != nil {
			t.Errorf("%s refused: %v", ok, p.Err())
		}
	}
}
