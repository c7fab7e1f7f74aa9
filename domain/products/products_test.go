package products

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
)

// validProduct is a product passing every rule; cases change one attribute.
func validProduct() map[string]any {
	return map[string]any{
		"id": "sku-1", "title": "Blue shoe", "description": "A comfortable shoe.\nMade of canvas.",
		"availability": "in stock", "condition": "new", "price": "60.00 USD",
		"link": "https://shop.example/shoe", "image_link": "https://img.example/shoe.jpg",
		"brand": "Aviary", "inventory": 3,
	}
}

func with(kv ...any) map[string]any {
	p := validProduct()
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(p, kv[i].(string))
			continue
		}
		p[kv[i].(string)] = kv[i+1]
	}
	return p
}

func raw(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func issueKeys(issues []Issue) []string {
	out := make([]string, len(issues))
	for i, is := range issues {
		out[i] = is.Field + ":" + is.Rule
	}
	return out
}

// TestProductRules checks every rule alone: an invalid value gives exactly
// the expected field:rule errors, a valid one none.
func TestProductRules(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	imgs := func(n int) string {
		u := make([]string, n)
		for i := range u {
			u[i] = fmt.Sprintf("https://img.example/%d.png", i)
		}
		return strings.Join(u, ",")
	}
	cases := []struct {
		name    string
		product map[string]any
		want    []string // field:rule, in order; nil for valid
	}{
		{"valid", validProduct(), nil},
		{"id missing", with("id", nil), []string{"id:required"}},
		{"id blank", with("id", "   "), []string{"id:required"}},
		{"id too long", with("id", long(101)), []string{"id:max_length"}},
		{"id not a string", with("id", 12), []string{"id:type"}},
		{"unknown attribute", with("colour", "red"), []string{"colour:unknown_field"}},
		{"empty attribute name", with("", "red"), []string{"product:unknown_field"}},
		{"title missing", with("title", nil), []string{"title:required"}},
		{"title 150", with("title", long(150)), nil},
		{"title 151", with("title", long(151)), []string{"title:max_length"}},
		{"title 150 runes multibyte", with("title", strings.Repeat("é", 150)), nil},
		{"title control char", with("title", "a\x07b"), []string{"title:plain_text"}},
		{"description missing", with("description", nil), []string{"description:required"}},
		{"description 5000", with("description", long(5000)), nil},
		{"description 5001", with("description", long(5001)), []string{"description:max_length"}},
		{"description html", with("description", "A <b>bold</b> shoe"), []string{"description:plain_text"}},
		{"description html comment", with("description", "A <!-- x --> shoe"), []string{"description:plain_text"}},
		{"description less-than is text", with("description", "size < 42 and > 38"), nil},
		{"availability missing", with("availability", nil), []string{"availability:required"}},
		{"availability enum", with("availability", "in-stock"), []string{"availability:enum"}},
		{"availability preorder", with("availability", "preorder", "inventory", nil), nil},
		{"condition enum", with("condition", "broken"), []string{"condition:enum"}},
		{"condition refurbished", with("condition", "refurbished"), nil},
		{"price missing", with("price", nil), []string{"price:required"}},
		{"price comma decimal", with("price", "60,00 USD"), []string{"price:price_format"}},
		{"price no space", with("price", "60.00USD"), []string{"price:price_format"}},
		{"price no code", with("price", "60.00"), []string{"price:price_format"}},
		{"price negative", with("price", "-1.00 USD"), []string{"price:price_format"}},
		{"price fake currency", with("price", "60.00 ABC"), []string{"price:currency"}},
		{"price fund code", with("price", "60.00 XAU"), []string{"price:currency"}},
		{"price integer JPY", with("price", "6000 JPY"), nil},
		{"price three decimals KWD", with("price", "1.250 KWD"), nil},
		{"price 1.5 JPY", with("price", "1.5 JPY"), []string{"price:minor_units"}},
		{"price 1.00 JPY", with("price", "1.00 JPY"), nil},
		{"price 1.005 USD", with("price", "1.005 USD"), []string{"price:minor_units"}},
		{"price 1.2505 KWD", with("price", "1.2505 KWD"), []string{"price:minor_units"}},
		{"sale price 0.5 JPY", with("price", "2 JPY", "sale_price", "0.5 JPY"), []string{"sale_price:minor_units"}},
		{"link missing", with("link", nil), []string{"link:required"}},
		{"link http", with("link", "http://shop.example/shoe"), []string{"link:https_url"}},
		{"link relative", with("link", "/shoe"), []string{"link:https_url"}},
		{"link credentials", with("link", "https://u:p@shop.example/"), []string{"link:https_url"}},
		{"mobile_link http", with("mobile_link", "http://m.shop.example/"), []string{"mobile_link:https_url"}},
		{"mobile_link https", with("mobile_link", "https://m.shop.example/"), nil},
		{"image_link missing", with("image_link", nil), []string{"image_link:required"}},
		{"image_link ftp", with("image_link", "ftp://img.example/a.jpg"), []string{"image_link:image_url"}},
		{"image_link bmp", with("image_link", "https://img.example/a.BMP"), []string{"image_link:image_format"}},
		{"image_link svg", with("image_link", "https://img.example/a.svg?x=1"), []string{"image_link:image_format"}},
		{"image_link no extension", with("image_link", "https://img.example/image?id=3"), nil},
		{"image_link webp", with("image_link", "https://img.example/a.webp"), nil},
		{"brand gtin mpn all missing", with("brand", nil), []string{"brand:required_without_all", "gtin:required_without_all", "mpn:required_without_all"}},
		{"gtin alone", with("brand", nil, "gtin", "4006381333931"), nil},
		{"mpn alone", with("brand", nil, "mpn", "3268793T"), nil},
		{"gtin letters", with("gtin", "40063813339A"), []string{"gtin:gtin_format"}},
		{"gtin length 11", with("gtin", "40063813339"), []string{"gtin:gtin_format"}},
		{"gtin-13 check digit", with("gtin", "4006381333932"), []string{"gtin:gtin_check_digit"}},
		{"gtin-12 upc", with("gtin", "036000291452"), nil},
		{"gtin-8", with("gtin", "96385074"), nil},
		{"gtin-14", with("gtin", "10012345678902"), nil},
		{"isbn-10", with("gtin", "080442957X"), nil},
		{"isbn-10 check digit", with("gtin", "0804429571"), []string{"gtin:gtin_check_digit"}},
		{"mpn too long", with("mpn", long(71)), []string{"mpn:max_length"}},
		{"additional images 10", with("additional_image_link", imgs(10)), nil},
		{"additional images 11", with("additional_image_link", imgs(11)), []string{"additional_image_link:max_items"}},
		{"additional image bad url", with("additional_image_link", "https://img.example/a.png, notaurl"), []string{"additional_image_link[1]:image_url"}},
		{"additional image tiff", with("additional_image_link", "https://img.example/a.tiff"), []string{"additional_image_link[0]:image_format"}},
		{"additional image empty entry", with("additional_image_link", "https://img.example/a.png,,https://img.example/b.png"), []string{"additional_image_link[1]:required"}},
		{"product_type levels", with("product_type", "Apparel > Shoes > Sneakers"), nil},
		{"product_type no spaces", with("product_type", "Apparel>Shoes"), []string{"product_type:product_type_levels"}},
		{"product_type empty level", with("product_type", "Apparel >  > Shoes"), []string{"product_type:product_type_levels"}},
		{"inventory in stock 0", with("inventory", 0), []string{"inventory:in_stock_inventory"}},
		{"inventory out of stock 0", with("inventory", 0, "availability", "out of stock"), nil},
		{"inventory negative", with("inventory", -1, "availability", "preorder"), []string{"inventory:min"}},
		{"inventory float", with("inventory", 1.5), []string{"inventory:type"}},
		{"inventory string", with("inventory", "3"), []string{"inventory:type"}},
		{"sale_price lower", with("sale_price", "50.00 USD"), nil},
		{"sale_price equal", with("sale_price", "60 USD"), []string{"sale_price:sale_price_lower"}},
		{"sale_price higher", with("sale_price", "60.01 USD"), []string{"sale_price:sale_price_lower"}},
		{"sale_price other currency", with("sale_price", "50.00 EUR"), []string{"sale_price:sale_price_currency"}},
		{"sale_price format", with("sale_price", "fifty"), []string{"sale_price:price_format"}},
		{"sale date range", with("sale_price", "50.00 USD", "sale_price_effective_date", "2022-10-04T17:20:31.000Z/2022-10-10T04:00:00.000Z"), nil},
		{"sale date range minutes", with("sale_price", "50.00 USD", "sale_price_effective_date", "2022-10-04T17:20+01:00/2022-10-10T04:00+01:00"), nil},
		{"sale date one time", with("sale_price", "50.00 USD", "sale_price_effective_date", "2022-10-04T17:20:31Z"), []string{"sale_price_effective_date:date_range_format"}},
		{"sale date no zone", with("sale_price", "50.00 USD", "sale_price_effective_date", "2022-10-04T17:20:31/2022-10-10T04:00:00"), []string{"sale_price_effective_date:date_range_format"}},
		{"sale date reversed", with("sale_price", "50.00 USD", "sale_price_effective_date", "2022-10-10T04:00:00Z/2022-10-04T17:20:31Z"), []string{"sale_price_effective_date:date_range_order"}},
		{"sale date equal", with("sale_price", "50.00 USD", "sale_price_effective_date", "2022-10-10T04:00:00Z/2022-10-10T04:00:00Z"), []string{"sale_price_effective_date:date_range_order"}},
		{"gender enum", with("gender", "girl"), []string{"gender:enum"}},
		{"gender unisex", with("gender", "unisex"), nil},
		{"age_group enum", with("age_group", "senior"), []string{"age_group:enum"}},
		{"age_group all ages", with("age_group", "all ages"), nil},
		{"color hex", with("color", "#ff0000"), []string{"color:color_name"}},
		{"color hex no hash", with("color", "00ff00"), []string{"color:color_name"}},
		{"color word of hex letters", with("color", "facade"), nil},
		{"item_group_id too long", with("item_group_id", long(51), "size", "M"), []string{"item_group_id:max_length"}},
		{"custom_label_0 100", with("custom_label_0", long(100)), nil},
		{"custom_label_4 101", with("custom_label_4", long(101)), []string{"custom_label_4:max_length"}},
		{"custom label null is absent", with("custom_label_1", nil), nil},
		{"google_product_category", with("google_product_category", "Apparel & Accessories > Shoes"), nil},
		{"not an object", nil, []string{"product:type"}},
	}
	pv := NewValidator()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var in json.RawMessage = []byte(`["not", "an", "object"]`)
			if c.product != nil {
				in = raw(t, c.product)
			}
			res := pv.Item(in)
			got := issueKeys(res.Errors)
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("errors %v, want %v (%+v)", got, c.want, res.Errors)
			}
			if res.Valid() != (len(c.want) == 0) {
				t.Errorf("Valid() = %v with errors %v", res.Valid(), got)
			}
		})
	}
}

// TestProductWarnings checks each doubtful-but-accepted value gives its
// warning and no error.
func TestProductWarnings(t *testing.T) {
	cases := []struct {
		name    string
		product map[string]any
		want    []string
	}{
		{"none", validProduct(), nil},
		{"title all caps", with("title", "BLUE SHOE"), []string{"title:all_caps"}},
		{"short caps acronym", with("title", "USB"), nil},
		{"html entity", with("description", "Salt &amp; pepper"), []string{"description:html_entity"}},
		{"zero price", with("price", "0.00 USD"), []string{"price:zero_price"}},
		{"http image", with("image_link", "http://img.example/a.png"), []string{"image_link:insecure_url"}},
		{"product_key sent", with("product_key", "123"), []string{"product_key:read_only"}},
		{"item_group_key sent", with("item_group_key", "9"), []string{"item_group_key:read_only"}},
		{"sale date without sale price", with("sale_price_effective_date", "2022-10-04T17:20:31Z/2022-10-10T04:00:00Z"), []string{"sale_price_effective_date:sale_price_missing"}},
		{"stock but out of stock", with("availability", "out of stock", "inventory", 4), []string{"inventory:inventory_not_in_stock"}},
		{"group without variant attributes", with("item_group_id", "g1"), []string{"item_group_id:no_variant_attributes"}},
	}
	pv := NewValidator()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := pv.Item(raw(t, c.product))
			if !res.Valid() {
				t.Fatalf("errors %v", issueKeys(res.Errors))
			}
			if got := issueKeys(res.Warnings); strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("warnings %v, want %v", got, c.want)
			}
		})
	}
}

// TestProductBatchRules checks the rules across items: duplicate ids (all
// refused) and variants without item_group_id.
func TestProductBatchRules(t *testing.T) {
	variant := func(id, size string, group any) map[string]any {
		p := with("id", id, "size", size, "item_group_id", group)
		return p
	}
	cases := []struct {
		name  string
		items []map[string]any
		want  [][]string
	}{
		{"distinct ids", []map[string]any{with("id", "a"), with("id", "b", "title", "Red shoe")}, [][]string{nil, nil}},
		{"duplicate ids all refused", []map[string]any{with("id", "a"), with("id", "b", "title", "Other"), with("id", "a", "title", "Third")},
			[][]string{{"id:duplicate_id"}, nil, {"id:duplicate_id"}}},
		{"variants with group", []map[string]any{variant("a", "S", "g"), variant("b", "M", "g")}, [][]string{nil, nil}},
		{"variants without group", []map[string]any{variant("a", "S", nil), variant("b", "M", "g")},
			[][]string{{"item_group_id:item_group_id_required"}, nil}},
		{"same title same attributes are not variants", []map[string]any{with("id", "a"), with("id", "b")}, [][]string{nil, nil}},
		{"title match ignores case", []map[string]any{with("id", "a", "color", "red"), with("id", "b", "title", "BLUE shoe", "color", "blue")},
			[][]string{{"item_group_id:item_group_id_required"}, {"item_group_id:item_group_id_required"}}},
	}
	pv := NewValidator()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := make([]json.RawMessage, len(c.items))
			for i, it := range c.items {
				in[i] = raw(t, maps.Clone(it))
			}
			res := pv.Batch(in)
			for i := range res {
				if got := issueKeys(res[i].Errors); strings.Join(got, "|") != strings.Join(c.want[i], "|") {
					t.Errorf("item %d: errors %v, want %v", i, got, c.want[i])
				}
			}
		})
	}
}
