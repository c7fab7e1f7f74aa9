package products

import (
	"encoding/json"
	"math/big"
	"reflect"
	"strings"
	"testing"
)

// FuzzItem validates arbitrary product objects and checks:
//   - every issue names a field and a rule, and the product is Valid
//     exactly when it has no error;
//   - a valid product, printed again as JSON, validates again to the same
//     product with no error (its attributes are already trimmed, its
//     empty optional ones absent);
//   - a batch of the product twice marks both as duplicates when they
//     have an id.
//
// Seeds are the product of the table tests with one attribute changed;
// crashers it finds are kept in testdata/fuzz/FuzzItem.
func FuzzItem(f *testing.F) {
	seeds := []map[string]any{
		validProduct(), with("price", "1.5 JPY"), with("price", "60 usd"), with("price", "60.00 XXX"),
		with("gtin", "4006381333931"), with("gtin", "0306406152"), with("gtin", "030640615X"), with("gtin", "12345"),
		with("sale_price", "50.00 USD", "sale_price_effective_date", "2031-01-01T00:00Z/2031-02-01T00:00:00+01:00"),
		with("sale_price", "70.00 USD"), with("sale_price_effective_date", "2031-02-01T00:00Z/2031-01-01T00:00Z"),
		with("product_type", "Apparel > Shoes"), with("product_type", "Apparel >> Shoes"), with("color", "#ff0000"),
		with("additional_image_link", "https://img.example/a.png,https://img.example/b.svg"),
		with("link", "http://shop.example/x"), with("image_link", "https://u:p@img.example/x.jpg"),
		with("title", "ALL CAPS TITLE"), with("description", "a &amp; b"), with("inventory", -1), with("inventory", 1.5),
		with("availability", "out of stock", "inventory", 3), with("title", nil), with("id", "  "), with("x", 1),
		with("title", 42), with("id", "a\nb"), with("description", "\x00"), with("mobile_link", ""),
	}
	for _, s := range seeds {
		b, err := json.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{`[]`, `null`, `"x"`, `{`, `{"id":"a","id":"b"}`, `{"inventory":1e30}`, `{"price":"\ud800 USD"}`} {
		f.Add([]byte(s))
	}
	pv := NewValidator()
	f.Fuzz(func(t *testing.T, raw []byte) {
		res := pv.Item(raw)
		for _, is := range append(res.Errors, res.Warnings...) {
			if is.Field == "" || is.Rule == "" || is.Message == "" {
				t.Fatalf("%q: issue %+v lacks a field, rule or message", raw, is)
			}
		}
		if res.Valid() != (len(res.Errors) == 0) {
			t.Fatalf("%q: Valid() %v with errors %+v", raw, res.Valid(), res.Errors)
		}
		batch := pv.Batch([]json.RawMessage{raw, raw})
		if id := batch[0].Product.ID; id != "" && (!hasIssue(batch[0].Errors, "id") || !hasIssue(batch[1].Errors, "id")) {
			t.Fatalf("%q twice: id %q not marked as a duplicate", raw, id)
		}
		if !res.Valid() {
			return
		}
		printed, err := json.Marshal(res.Product)
		if err != nil {
			t.Fatalf("%q: valid product %+v does not marshal: %v", raw, res.Product, err)
		}
		again := pv.Item(printed)
		if !again.Valid() || !reflect.DeepEqual(again.Product, res.Product) {
			t.Fatalf("%q valid as %+v; printed as %s it is %+v with errors %+v", raw, res.Product, printed, again.Product, again.Errors)
		}
	})
}

// FuzzParsePrice checks the price format ("60.00 USD"): an accepted
// price's amount has at most 12 integer digits and 4 decimals, its code
// is 3 upper-case letters, and the price printed again with 4 decimals
// parses to the same amount and code. A date range accepted by
// parseDateRange prints (RFC 3339) and parses back to the same instants.
func FuzzParsePrice(f *testing.F) {
	for _, s := range []string{"60.00 USD", "0 jpy", "1.5 JPY", "999999999999.9999 KWD", "1000000000000 USD", "1. USD", ".5 USD",
		"1.23456 USD", "1,00 EUR", "1  USD", "-1 USD", "1 US", "١ USD", "60.00 USD\n", "2031-01-01T00:00Z/2031-02-01T00:00:00+01:00",
		"2031-01-01T00:00:00.5-0130/2031-01-01T00:00+23:59", "2031-01-01/2031-02-01", "/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if start, end, ok := parseDateRange(s); ok {
			again := start.Format("2006-01-02T15:04:05.999999999Z07:00") + "/" + end.Format("2006-01-02T15:04:05.999999999Z07:00")
			s2, e2, ok := parseDateRange(again)
			if !ok || !s2.Equal(start) || !e2.Equal(end) {
				t.Fatalf("date range %q = %v/%v, printed as %q reads back as %v/%v, %v", s, start, end, again, s2, e2, ok)
			}
		}
		amount, code, ok := ParsePrice(s)
		if !ok {
			return
		}
		if amount.Sign() < 0 || len(code) != 3 || code != strings.ToUpper(code) {
			t.Fatalf("ParsePrice(%q) = %v %q", s, amount, code)
		}
		limit, _ := new(big.Rat).SetString("1000000000000")
		if amount.Cmp(limit) >= 0 {
			t.Fatalf("ParsePrice(%q) = %v: more than 12 integer digits", s, amount)
		}
		printed := amount.FloatString(4) + " " + code
		a2, c2, ok := ParsePrice(printed)
		if !ok || a2.Cmp(amount) != 0 || c2 != code {
			t.Fatalf("ParsePrice(%q) = %v %s, printed as %q reads back as %v %s, %v", s, amount, code, printed, a2, c2, ok)
		}
		if !new(big.Rat).Mul(amount, big.NewRat(10000, 1)).IsInt() {
			t.Fatalf("ParsePrice(%q) = %v: more than 4 decimals", s, amount)
		}
	})
}
