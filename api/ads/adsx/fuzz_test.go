package adsx

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// fuzzStatuses and fuzzSortable are the enum and sort attributes of the
// list FuzzParams reads.
var (
	fuzzStatuses = []string{"ACTIVE", "PAUSED", "DRAFT"}
	fuzzSortable = Sortable{"name", "created_at"}
	fuzzAllowed  = append([]string{"campaign_ids", "entity_status", "entity_statuses", "start_time", "bid_amount_local_micro",
		"currency", "name", "line_item_id", "automatically_select_bid", "tags"}, ListParams...)
)

// FuzzParams reads an ads request (query string, form body, path value)
// with every getter the ads handlers use, and checks:
//   - readParams and every getter answer nil or an *apierr.Error with a
//     4xx status (400 for parameters, 403/404 for the path, 413 for the
//     body): never an error the writer would render as a 5xx;
//   - request.params (Echo) marshals to JSON;
//   - what a getter returns when no problem is recorded is valid: ids of
//     the id alphabet, enums as listed, times in UTC with an offset of a
//     real zone that format and parse back to the same instant, a bid
//     within bounds and a whole number of the currency's minor unit,
//     lists without empty entries, the list options within their bounds
//     and a cursor that decoded.
func FuzzParams(f *testing.F) {
	seeds := []struct {
		query, body, account string
		post                 bool
	}{
		{"campaign_ids=c1,c2&entity_status=active&count=5", "", "18ce54d4x5t", false},
		{"start_time=2031-01-15T00:00:00Z&sort_by=name-desc&with_deleted=TRUE", "", "abc", false},
		{"start_time=2031-01-15T10:00+02:00&cursor=x.y", "", "a", false},
		{"start_time=2031-01-15&entity_statuses=ACTIVE,paused", "", "a", false},
		{"start_time=2031-01-15T00:00:00-1300", "", "a", false},
		{"", "name=Summer%20sale&bid_amount_local_micro=1500000&currency=JPY&automatically_select_bid=false", "a", true},
		{"", "bid_amount_local_micro=1500000&currency=USD&tags=a,%20b,,c", "a", true},
		{"name=a", "name=b", "a", true},
		{"unknown=1", "", "a", false},
		{"", "unknown=1&x=%zz", "a", true},
		{"campaign_ids=" + strings.Repeat("c,", 201) + "c", "", "a", false},
		{"line_item_id=a,b&count=0&with_total_count=true&cursor=", "", "a", false},
		{"", "", "../x", false},
		{"", "", strings.Repeat("x", 65), false},
		{"", "", "\xff", false},
		{"name=%00&tags=%FF", "", "a", false},
		{"bid_amount_local_micro=-9223372036854775808&currency=KWD", "", "a", false},
	}
	for _, s := range seeds {
		f.Add(s.query, s.body, s.account, s.post)
	}
	cursors, err := NewCursors([]byte(strings.Repeat("k", 32)))
	if err != nil {
		f.Fatal(err)
	}
	kit := Kit{Cursors: cursors}
	f.Fuzz(func(t *testing.T, query, body, account string, post bool) {
		r := httptest.NewRequest(http.MethodGet, "/x", nil)
		if post {
			r = httptest.NewRequest(http.MethodPost, "/x", strings.NewReader(body))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		r.URL.RawQuery = query
		r.Pattern = "GET /12/accounts/{account_id}/campaigns"
		r.SetPathValue("account_id", account)
		p, err := readParams(r, fuzzAllowed)
		if err != nil {
			checkClientError(t, query, err)
			return
		}
		if !validID(p.Echo()["account_id"].(string)) {
			t.Fatalf("path value %q accepted", account)
		}
		read := readAll(kit, p)
		if err := p.Err(); err != nil {
			checkClientError(t, query+" | "+body, err)
		}
		if _, err := json.Marshal(p.Echo()); err != nil {
			t.Fatalf("request.params %v does not marshal: %v", p.Echo(), err)
		}
		read.check(t, p)
	})
}

// fuzzRead is what FuzzParams' getters returned.
type fuzzRead struct {
	ids, statuses, tags []string
	status              *string
	start               *time.Time
	bid                 *int64
	currency            *string
	opts                storage.ListOptions
}

func readAll(kit Kit, p *Params) fuzzRead {
	var r fuzzRead
	r.ids = p.IDs("campaign_ids")
	r.status = p.Enum("entity_status", fuzzStatuses)
	r.statuses = p.EnumList("entity_statuses", fuzzStatuses, 3)
	r.start = p.Time("start_time")
	r.bid = p.Int64("bid_amount_local_micro", 1, 1<<50)
	r.currency = p.Enum("currency", []string{"USD", "JPY", "KWD", "EUR"})
	if r.bid != nil && r.currency != nil {
		if msg := validation.MicroAmountError(*r.bid, *r.currency); msg != "" {
			p.Fail("bid_amount_local_micro", msg)
		}
	}
	p.String("name", 255)
	p.ID("line_item_id")
	p.Flag("automatically_select_bid", true)
	r.tags = p.List("tags", 5)
	r.opts = kit.List(p, ListSpec{Sortable: fuzzSortable, Default: storage.Sort{Field: "created_at"}})
	return r
}

// check checks the values read of every parameter without an error.
func (r fuzzRead) check(t *testing.T, p *Params) {
	t.Helper()
	for _, id := range r.ids {
		if !validID(id) {
			t.Fatalf("campaign_ids holds %q", id)
		}
	}
	if r.status != nil && !slices.Contains(fuzzStatuses, *r.status) {
		t.Fatalf("entity_status %q", *r.status)
	}
	for _, s := range r.statuses {
		if !slices.Contains(fuzzStatuses, s) {
			t.Fatalf("entity_statuses holds %q", s)
		}
	}
	if r.start != nil {
		checkTime(t, p, *r.start)
	}
	if r.bid != nil && r.currency != nil && !p.Failed("bid_amount_local_micro") {
		if step := validation.MicroStep(*r.currency); step == 0 || *r.bid%step != 0 || *r.bid < 1 {
			t.Fatalf("bid %d %s accepted", *r.bid, *r.currency)
		}
	}
	for _, tag := range r.tags {
		if tag == "" || tag != strings.TrimSpace(tag) || !utf8.ValidString(tag) {
			t.Fatalf("tags hold %q", tag)
		}
	}
	o := r.opts
	if o.Count < 1 || o.Count > MaxCount || (o.Sort.Field != "created_at" && !slices.Contains(fuzzSortable, o.Sort.Field)) {
		t.Fatalf("list options %+v", o)
	}
	if o.After != nil && (p.Failed("cursor") || o.WithTotal) {
		t.Fatalf("cursor accepted with an error or with_total_count: %+v", o)
	}
}

// checkTime checks an accepted start_time.
func checkTime(t *testing.T, p *Params, at time.Time) {
	t.Helper()
	raw, _ := p.raw("start_time")
	parsed, ok := parseTime(raw)
	if at.Location() != time.UTC || !ok || !parsed.Equal(at) || validation.OffsetError(parsed) != "" {
		t.Fatalf("start_time %q read as %v", raw, at)
	}
	again, ok := parseTime(at.Format(time.RFC3339Nano))
	if !ok || !again.Equal(at) {
		t.Fatalf("start_time %v does not read back", at)
	}
}

// checkClientError fails unless err is an *apierr.Error with a 4xx
// status.
func checkClientError(t *testing.T, input string, err error) {
	t.Helper()
	var e *apierr.Error
	if !errors.As(err, &e) || e.Status < 400 || e.Status > 499 {
		t.Fatalf("%q: error %T %v is not a 4xx *apierr.Error", input, err, err)
	}
}

// FuzzCursor checks the ads list cursors: a cursor decodes, for its own
// query only, to the position it was made of; any other string (altered,
// truncated, of another key) is refused without a panic, and a cursor
// accepted for fp is one the signer made for fp.
func FuzzCursor(f *testing.F) {
	cursors, err := NewCursors([]byte(strings.Repeat("k", 32)))
	if err != nil {
		f.Fatal(err)
	}
	other, err := NewCursors([]byte(strings.Repeat("o", 32)))
	if err != nil {
		f.Fatal(err)
	}
	good := cursors.encode(storage.Position{Value: "m", ID: "id9"}, "fp")
	for _, s := range []struct{ value, id, fp, cursor string }{
		{"m", "id9", "fp", good}, {"", "", "", good[:len(good)-1]}, {"2031-01-15T00:00:00Z", "c1", "q", "."},
		{"\xff\x00", "\"", "fp", other.encode(storage.Position{Value: "m", ID: "id9"}, "fp")},
		{strconv.Itoa(1 << 40), strings.Repeat("z", 64), "GET /12/x\x00q=1", "e30." + good[strings.IndexByte(good, '.')+1:]},
	} {
		f.Add(s.value, s.id, s.fp, s.cursor)
	}
	f.Fuzz(func(t *testing.T, value, id, query, cursor string) {
		// A fingerprint is always base64url (queryFingerprint); any query
		// string maps to a distinct one.
		fp := base64.RawURLEncoding.EncodeToString([]byte(query))
		pos := storage.Position{Value: value, ID: id}
		c := cursors.encode(pos, fp)
		got, err := cursors.decode(c, fp)
		want := storage.Position{Value: jsonString(value), ID: jsonString(id)} // invalid UTF-8 bytes become U+FFFD
		if err != nil || got != want {
			t.Fatalf("cursor %q of %+v decodes as %+v, %v", c, pos, got, err)
		}
		if _, err := cursors.decode(c, fp+"x"); err == nil {
			t.Fatalf("cursor %q of query %q accepted for another query", c, fp)
		}
		if _, err := other.decode(c, fp); err == nil {
			t.Fatalf("cursor %q accepted under another key", c)
		}
		if p, err := cursors.decode(cursor, fp); err == nil {
			payload, _, _ := strings.Cut(cursor, ".")
			if cursor != payload+"."+cursors.mac(payload) {
				t.Fatalf("cursor %q accepted as %+v without its signature", cursor, p)
			}
		}
	})
}

// jsonString is s as encoding/json carries it: each byte of invalid
// UTF-8 becomes U+FFFD.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	var out string
	_ = json.Unmarshal(b, &out)
	return out
}
