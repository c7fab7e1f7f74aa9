// Package products holds the platform's product catalog rules: the
// attributes of a product, their enums and formats, and the checks that
// turn a product into errors and warnings (docs/ads-catalogs.md). The API
// tier validates uploads with it; the workers re-check stored products.
package products

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-playground/validator/v10"

	"github.com/aviary-dev/aviary/validation"
)

// Issue is one error or warning about a product: the attribute it
// concerns, the rule (a stable machine name) and a sentence for people.
// Its JSON shape is the one the API answers and the store keeps
// (docs/ads-catalogs.md).
type Issue struct {
	Field   string `json:"field"`
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

// Product is one product of a catalog batch as submitted, with the JSON
// names of the API. Surrounding whitespace is trimmed when decoding; an
// optional attribute sent empty or null is absent (nil).
type Product struct {
	ID                     string  `json:"id" validate:"required,max=100,single_line"`
	ProductKey             *string `json:"product_key" validate:"omitempty,max=64,single_line"`
	Title                  string  `json:"title" validate:"required,max=150,single_line"`
	Description            string  `json:"description" validate:"required,max=5000,plain_text"`
	Availability           string  `json:"availability" validate:"required,product_enum=availability"`
	Condition              string  `json:"condition" validate:"required,product_enum=condition"`
	Price                  string  `json:"price" validate:"required,price_format,currency,minor_units"`
	Link                   string  `json:"link" validate:"required,max=2000,https_url"`
	ImageLink              string  `json:"image_link" validate:"required,max=2000,image_url,image_format"`
	Brand                  *string `json:"brand" validate:"omitempty,max=100,single_line"`
	GTIN                   *string `json:"gtin" validate:"omitempty,gtin_format,gtin_check_digit"`
	MPN                    *string `json:"mpn" validate:"omitempty,max=70,single_line"`
	MobileLink             *string `json:"mobile_link" validate:"omitempty,max=2000,https_url"`
	AdditionalImageLink    *string `json:"additional_image_link" validate:"omitempty,max=22000"`
	GoogleProductCategory  *string `json:"google_product_category" validate:"omitempty,max=750,single_line"`
	ProductType            *string `json:"product_type" validate:"omitempty,max=750,single_line,product_type_levels"`
	Inventory              *int64  `json:"inventory"`
	SalePrice              *string `json:"sale_price" validate:"omitempty,price_format,currency,minor_units"`
	SalePriceEffectiveDate *string `json:"sale_price_effective_date" validate:"omitempty,date_range_format,date_range_order"`
	ItemGroupID            *string `json:"item_group_id" validate:"omitempty,max=50,single_line"`
	ItemGroupKey           *string `json:"item_group_key" validate:"omitempty,max=64,single_line"`
	Gender                 *string `json:"gender" validate:"omitempty,product_enum=gender"`
	Color                  *string `json:"color" validate:"omitempty,max=100,single_line,color_name"`
	Size                   *string `json:"size" validate:"omitempty,max=100,single_line"`
	AgeGroup               *string `json:"age_group" validate:"omitempty,product_enum=age_group"`
	CustomLabel0           *string `json:"custom_label_0" validate:"omitempty,max=100,single_line"`
	CustomLabel1           *string `json:"custom_label_1" validate:"omitempty,max=100,single_line"`
	CustomLabel2           *string `json:"custom_label_2" validate:"omitempty,max=100,single_line"`
	CustomLabel3           *string `json:"custom_label_3" validate:"omitempty,max=100,single_line"`
	CustomLabel4           *string `json:"custom_label_4" validate:"omitempty,max=100,single_line"`
}

// Product limits and enums (the spec's product field rules).
const (
	// MaxBatch is how many products one PUT products takes.
	MaxBatch = 25
	// MaxAdditionalImages is how many URLs additional_image_link lists.
	MaxAdditionalImages = 10
)

// productEnums are the enum attributes' values, by product_enum parameter.
var productEnums = map[string][]string{
	"availability": {"in stock", "available for order", "preorder", "out of stock", "discontinued"},
	"condition":    {"new", "used", "refurbished"},
	"gender":       {"female", "male", "unisex"},
	"age_group":    {"adult", "all ages", "teen", "kids", "toddler", "infant", "newborn"},
}

// Enum is the list of values of an enum attribute (availability,
// condition, gender, age_group).
func Enum(name string) []string { return slices.Clone(productEnums[name]) }

// Product rule names of checks outside the struct tags.
const (
	RuleRequired          = "required"
	RuleType              = "type"
	RuleUnknownField      = "unknown_field"
	RuleDuplicateID       = "duplicate_id"
	RuleBrandGTINMPN      = "required_without_all"
	RuleInStockInventory  = "in_stock_inventory"
	RuleMin               = "min"
	RuleMaxItems          = "max_items"
	RuleSaleCurrency      = "sale_price_currency"
	RuleSaleLower         = "sale_price_lower"
	RuleVariantsGroup     = "item_group_id_required"
	RuleAllCaps           = "all_caps"
	RuleHTMLEntity        = "html_entity"
	RuleInsecureURL       = "insecure_url"
	RuleReadOnly          = "read_only"
	RuleZeroPrice         = "zero_price"
	RuleSaleWithoutPrice  = "sale_price_missing"
	RuleStockNotAvailable = "inventory_not_in_stock"
	RuleNoVariantAttrs    = "no_variant_attributes"
)

// Result is the outcome of validating one submitted product:
// Product is usable only when Errors is empty.
type Result struct {
	Product  Product
	Errors   []Issue
	Warnings []Issue
}

// Valid reports whether the product has no error.
func (r Result) Valid() bool { return len(r.Errors) == 0 }

// Validator checks catalog products: struct rules through
// validator/v10 with the product tags registered, then the rules across
// attributes and across the products of one batch. Safe for concurrent
// use; build one per process.
type Validator struct {
	v      *validator.Validate
	fields map[string]int // JSON name -> index of Product's field
}

// NewValidator builds a Validator.
func NewValidator() *Validator {
	v := validator.New()
	v.RegisterTagNameFunc(func(f reflect.StructField) string { return strings.SplitN(f.Tag.Get("json"), ",", 2)[0] })
	for tag, fn := range map[string]validator.Func{
		"single_line": func(fl validator.FieldLevel) bool { return plainText(fl.Field().String(), false) },
		"plain_text":  func(fl validator.FieldLevel) bool { return plainText(fl.Field().String(), true) },
		"product_enum": func(fl validator.FieldLevel) bool {
			return slices.Contains(productEnums[fl.Param()], fl.Field().String())
		},
		"price_format":        func(fl validator.FieldLevel) bool { _, _, ok := ParsePrice(fl.Field().String()); return ok },
		"currency":            func(fl validator.FieldLevel) bool { return priceCurrencyKnown(fl.Field().String()) },
		"minor_units":         func(fl validator.FieldLevel) bool { return priceInMinorUnits(fl.Field().String()) },
		"https_url":           func(fl validator.FieldLevel) bool { return webURL(fl.Field().String(), true) },
		"image_url":           func(fl validator.FieldLevel) bool { return webURL(fl.Field().String(), false) },
		"image_format":        func(fl validator.FieldLevel) bool { return imageFormatAllowed(fl.Field().String()) },
		"gtin_format":         func(fl validator.FieldLevel) bool { return gtinFormat(fl.Field().String()) },
		"gtin_check_digit":    func(fl validator.FieldLevel) bool { return gtinCheckDigit(fl.Field().String()) },
		"product_type_levels": func(fl validator.FieldLevel) bool { return productTypeLevels(fl.Field().String()) },
		"date_range_format":   func(fl validator.FieldLevel) bool { _, _, ok := parseDateRange(fl.Field().String()); return ok },
		"date_range_order":    func(fl validator.FieldLevel) bool { s, e, _ := parseDateRange(fl.Field().String()); return s.Before(e) },
		"color_name":          func(fl validator.FieldLevel) bool { return !hexColorCode(fl.Field().String()) },
	} {
		if err := v.RegisterValidation(tag, fn); err != nil {
			panic(fmt.Sprintf("register product rule %s: %v", tag, err))
		}
	}
	fields := map[string]int{}
	t := reflect.TypeFor[Product]()
	for i := range t.NumField() {
		fields[strings.SplitN(t.Field(i).Tag.Get("json"), ",", 2)[0]] = i
	}
	return &Validator{v: v, fields: fields}
}

// Batch decodes and validates the products of one batch, in order:
// each item on its own, then the rules across items (duplicate ids, all
// ignored; variants without item_group_id).
func (pv *Validator) Batch(items []json.RawMessage) []Result {
	out := make([]Result, len(items))
	for i, raw := range items {
		out[i] = pv.Item(raw)
	}
	markDuplicates(out)
	checkVariants(out)
	return out
}

// Item decodes and validates one product on its own.
func (pv *Validator) Item(raw json.RawMessage) Result {
	p, errs := pv.Decode(raw)
	res := Result{Product: p, Errors: errs}
	if hasIssue(errs, "product") {
		return res // not an object: nothing else to check
	}
	res.Errors = append(res.Errors, pv.structIssues(p, errs)...)
	res.Errors = append(res.Errors, crossFieldErrors(p, res.Errors)...)
	res.Warnings = productWarnings(p)
	return res
}

// unknownField is the issue of an attribute name the catalog does not
// know; an empty name is reported on the product itself, so every issue
// names a field.
func unknownField(name string) Issue {
	if name == "" {
		return Issue{Field: "product", Rule: RuleUnknownField, Message: "A product attribute name can not be empty"}
	}
	return Issue{Field: name, Rule: RuleUnknownField, Message: fmt.Sprintf("%s is not a product attribute", name)}
}

// Decode reads one product object field by field, so that every attribute
// of the wrong JSON type and every unknown attribute is reported (rules
// "type" and "unknown_field") while the others are still read.
func (pv *Validator) Decode(raw json.RawMessage) (Product, []Issue) {
	var p Product
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return p, []Issue{{Field: "product", Rule: RuleType, Message: "A product must be a JSON object"}}
	}
	var issues []Issue
	rv := reflect.ValueOf(&p).Elem()
	for _, name := range sortedKeys(obj) {
		i, ok := pv.fields[name]
		if !ok {
			issues = append(issues, unknownField(name))
			continue
		}
		if bytes.Equal(bytes.TrimSpace(obj[name]), []byte("null")) {
			continue
		}
		f := rv.Field(i)
		if err := json.Unmarshal(obj[name], f.Addr().Interface()); err != nil {
			f.SetZero()
			issues = append(issues, Issue{Field: name, Rule: RuleType, Message: fmt.Sprintf("%s must be a JSON %s", name, jsonKind(f.Type()))})
		}
	}
	normalize(&p)
	return p, issues
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func jsonKind(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Int64 {
		return "integer"
	}
	return "string"
}

// normalize trims every text attribute and turns empty optional ones into
// absent ones.
func normalize(p *Product) {
	v := reflect.ValueOf(p).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch {
		case f.Kind() == reflect.String:
			f.SetString(strings.TrimSpace(f.String()))
		case f.Kind() == reflect.Pointer && !f.IsNil() && f.Elem().Kind() == reflect.String:
			s := strings.TrimSpace(f.Elem().String())
			if s == "" {
				f.SetZero()
				continue
			}
			f.Elem().SetString(s)
		}
	}
}

// structIssues runs the tag rules; an attribute already refused by
// decoding is not reported twice.
func (pv *Validator) structIssues(p Product, decoded []Issue) []Issue {
	err := pv.v.Struct(p)
	var verrs validator.ValidationErrors
	if err == nil || !errors.As(err, &verrs) {
		return nil
	}
	var out []Issue
	for _, fe := range verrs {
		if hasIssue(decoded, fe.Field()) {
			continue
		}
		rule, msg := tagRule(fe.Field(), fe.Tag(), fe.Param(), fmt.Sprint(fe.Value()))
		out = append(out, Issue{Field: fe.Field(), Rule: rule, Message: msg})
	}
	return out
}

func hasIssue(issues []Issue, field string) bool {
	return slices.ContainsFunc(issues, func(i Issue) bool { return i.Field == field })
}

// tagRule names a failed tag as a product rule with its message.
func tagRule(field, tag, param, value string) (string, string) {
	if len(value) > 80 {
		value = value[:80] + "…"
	}
	switch tag {
	case "required":
		return RuleRequired, fmt.Sprintf("%s is required", field)
	case "max":
		return "max_length", fmt.Sprintf("%s must be at most %s characters", field, param)
	case "product_enum":
		return "enum", fmt.Sprintf("%s must be one of [%s], got %q", field, strings.Join(productEnums[param], ", "), value)
	case "single_line":
		return "plain_text", fmt.Sprintf("%s must be plain text on one line, without control characters", field)
	case "plain_text":
		return "plain_text", fmt.Sprintf("%s must be plain text: no HTML markup and no control characters", field)
	case "price_format":
		return "price_format", fmt.Sprintf("%s must be a number with . as the decimal point, a space and an ISO 4217 code (\"60.00 USD\"), got %q", field, value)
	case "currency":
		return "currency", fmt.Sprintf("%s has no ISO 4217 currency code: %q", field, value)
	case "minor_units":
		return "minor_units", fmt.Sprintf("%s is finer than its currency's minor unit (JPY has none, USD 2 decimals): %q", field, value)
	case "https_url":
		return "https_url", fmt.Sprintf("%s must be an absolute https URL, got %q", field, value)
	case "image_url":
		return "image_url", fmt.Sprintf("%s must be an absolute http or https URL, got %q", field, value)
	case "image_format":
		return "image_format", fmt.Sprintf("%s must be a JPG, GIF, WEBP or PNG image, got %q", field, value)
	case "gtin_format":
		return "gtin_format", fmt.Sprintf("%s must be 8, 12, 13 or 14 digits (GTIN, UPC, EAN, JAN) or an ISBN-10, got %q", field, value)
	case "gtin_check_digit":
		return "gtin_check_digit", fmt.Sprintf("%s has a wrong check digit: %q", field, value)
	case "product_type_levels":
		return "product_type_levels", fmt.Sprintf("%s levels must be non-empty and separated by \" > \", got %q", field, value)
	case "date_range_format":
		return "date_range_format", fmt.Sprintf("%s must be two ISO 8601 date-times with a time zone separated by /, got %q", field, value)
	case "date_range_order":
		return "date_range_order", fmt.Sprintf("%s must start before it ends, got %q", field, value)
	case "color_name":
		return "color_name", fmt.Sprintf("%s must name a color, not a hex code: %q", field, value)
	}
	return tag, fmt.Sprintf("%s is invalid (%s)", field, tag)
}

// crossFieldErrors are the rules between attributes of one product;
// attributes already in error are not compared.
func crossFieldErrors(p Product, known []Issue) []Issue {
	var out []Issue
	if p.Brand == nil && p.GTIN == nil && p.MPN == nil && !hasIssue(known, "gtin") {
		for _, f := range []string{"brand", "gtin", "mpn"} {
			out = append(out, Issue{Field: f, Rule: RuleBrandGTINMPN,
				Message: fmt.Sprintf("%s is required when none of brand, gtin and mpn is given", f)})
		}
	}
	out = append(out, inventoryErrors(p)...)
	out = append(out, additionalImageErrors(p.AdditionalImageLink)...)
	if !hasIssue(known, "price") && !hasIssue(known, "sale_price") {
		out = append(out, salePriceErrors(p)...)
	}
	return out
}

func inventoryErrors(p Product) []Issue {
	switch {
	case p.Inventory == nil:
		return nil
	case *p.Inventory < 0:
		return []Issue{{Field: "inventory", Rule: RuleMin, Message: fmt.Sprintf("inventory must be at least 0, got %d", *p.Inventory)}}
	case *p.Inventory < 1 && p.Availability == "in stock":
		return []Issue{{Field: "inventory", Rule: RuleInStockInventory,
			Message: fmt.Sprintf("inventory must be at least 1 when availability is \"in stock\", got %d", *p.Inventory)}}
	}
	return nil
}

// AdditionalImages splits additional_image_link into its URLs.
func AdditionalImages(list *string) []string {
	if list == nil {
		return nil
	}
	parts := strings.Split(*list, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

func additionalImageErrors(list *string) []Issue {
	urls := AdditionalImages(list)
	if len(urls) > MaxAdditionalImages {
		return []Issue{{Field: "additional_image_link", Rule: RuleMaxItems,
			Message: fmt.Sprintf("additional_image_link lists at most %d URLs, got %d", MaxAdditionalImages, len(urls))}}
	}
	var out []Issue
	for i, u := range urls {
		field := fmt.Sprintf("additional_image_link[%d]", i)
		tag := ""
		switch {
		case u == "":
			out = append(out, Issue{Field: field, Rule: RuleRequired, Message: field + " is empty"})
			continue
		case !webURL(u, false):
			tag = "image_url"
		case !imageFormatAllowed(u):
			tag = "image_format"
		default:
			continue
		}
		rule, msg := tagRule(field, tag, "", u)
		out = append(out, Issue{Field: field, Rule: rule, Message: msg})
	}
	return out
}

func salePriceErrors(p Product) []Issue {
	if p.SalePrice == nil {
		return nil
	}
	price, cur, ok1 := ParsePrice(p.Price)
	sale, saleCur, ok2 := ParsePrice(*p.SalePrice)
	switch {
	case !ok1 || !ok2:
		return nil
	case cur != saleCur:
		return []Issue{{Field: "sale_price", Rule: RuleSaleCurrency,
			Message: fmt.Sprintf("sale_price must be in the currency of price (%s), got %s", cur, saleCur)}}
	case sale.Cmp(price) >= 0:
		return []Issue{{Field: "sale_price", Rule: RuleSaleLower,
			Message: fmt.Sprintf("sale_price (%s) must be lower than price (%s)", *p.SalePrice, p.Price)}}
	}
	return nil
}

// productWarnings are the values accepted but doubtful.
func productWarnings(p Product) []Issue {
	var out []Issue
	warn := func(field, rule, msg string) { out = append(out, Issue{Field: field, Rule: rule, Message: msg}) }
	if allCaps(p.Title) {
		warn("title", RuleAllCaps, "title is all capitals; use normal casing")
	}
	if htmlEntity.MatchString(p.Description) {
		warn("description", RuleHTMLEntity, "description holds HTML entities (&amp; ...); they are shown as typed")
	}
	if amount, _, ok := ParsePrice(p.Price); ok && amount.Sign() == 0 {
		warn("price", RuleZeroPrice, "price is zero")
	}
	if strings.HasPrefix(strings.ToLower(p.ImageLink), "http://") {
		warn("image_link", RuleInsecureURL, "image_link is not https")
	}
	if p.ProductKey != nil {
		warn("product_key", RuleReadOnly, "product_key is generated by the service; it must name the product of this id")
	}
	if p.ItemGroupKey != nil {
		warn("item_group_key", RuleReadOnly, "item_group_key is generated by the service; the value sent is ignored")
	}
	if p.SalePriceEffectiveDate != nil && p.SalePrice == nil {
		warn("sale_price_effective_date", RuleSaleWithoutPrice, "sale_price_effective_date is given without sale_price")
	}
	if p.Inventory != nil && *p.Inventory > 0 && (p.Availability == "out of stock" || p.Availability == "discontinued") {
		warn("inventory", RuleStockNotAvailable, fmt.Sprintf("inventory is %d but availability is %q", *p.Inventory, p.Availability))
	}
	if p.ItemGroupID != nil && variantKey(p) == "" {
		warn("item_group_id", RuleNoVariantAttrs, "item_group_id is given but none of size, color, gender, age_group tells the variants apart")
	}
	return out
}

var htmlEntity = regexp.MustCompile(`&(#[0-9]+|#x[0-9a-fA-F]+|[a-zA-Z]+);`)

func allCaps(s string) bool {
	letters := 0
	for _, r := range s {
		if unicode.IsLower(r) {
			return false
		}
		if unicode.IsUpper(r) {
			letters++
		}
	}
	return letters >= 5
}

// markDuplicates reports every item whose id another item of the batch
// also has: all of them are ignored.
func markDuplicates(out []Result) {
	count := map[string]int{}
	for _, r := range out {
		if r.Product.ID != "" {
			count[r.Product.ID]++
		}
	}
	for i := range out {
		if n := count[out[i].Product.ID]; n > 1 {
			out[i].Errors = append([]Issue{{Field: "id", Rule: RuleDuplicateID,
				Message: fmt.Sprintf("id %q is given %d times in this batch; all of them are ignored", out[i].Product.ID, n)}}, out[i].Errors...)
		}
	}
}

// checkVariants requires item_group_id of variants: two or more products
// of the batch with the same title (without regard to case) that differ in
// size, color, gender or age_group are variants of one product, so each
// of them needs an item_group_id.
func checkVariants(out []Result) {
	byTitle := map[string][]int{}
	for i, r := range out {
		if r.Product.Title != "" && !hasIssue(r.Errors, "id") {
			t := strings.ToLower(r.Product.Title)
			byTitle[t] = append(byTitle[t], i)
		}
	}
	for _, idx := range byTitle {
		if len(idx) < 2 || !differ(out, idx) {
			continue
		}
		for _, i := range idx {
			if out[i].Product.ItemGroupID == nil {
				out[i].Errors = append(out[i].Errors, Issue{Field: "item_group_id", Rule: RuleVariantsGroup,
					Message: "item_group_id is required: products of this batch with this title differ in size, color, gender or age_group (variants)"})
			}
		}
	}
}

func differ(out []Result, idx []int) bool {
	first := variantKey(out[idx[0]].Product)
	for _, i := range idx[1:] {
		if variantKey(out[i].Product) != first {
			return true
		}
	}
	return false
}

// variantKey joins the variant attributes ("" when none is set).
func variantKey(p Product) string {
	parts := []*string{p.Size, p.Color, p.Gender, p.AgeGroup}
	var b strings.Builder
	set := false
	for _, s := range parts {
		b.WriteByte(0)
		if s != nil {
			set = true
			b.WriteString(strings.ToLower(*s))
		}
	}
	if !set {
		return ""
	}
	return b.String()
}

// plainText reports whether s is text without control characters (line
// breaks and tabs allowed when multiline) and, multiline or not, without
// HTML markup.
func plainText(s string, multiline bool) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) && !(multiline && (r == '\n' || r == '\r' || r == '\t')) {
			return false
		}
	}
	return !multiline || !htmlTag.MatchString(s)
}

var htmlTag = regexp.MustCompile(`<\s*/?\s*[a-zA-Z][a-zA-Z0-9-]*(\s[^<>]*)?/?\s*>|<!--`)

// priceRe is "<decimal> <CODE>": digits, an optional . and 1 to 4 decimals.
var priceRe = regexp.MustCompile(`^([0-9]{1,12})(\.[0-9]{1,4})? ([A-Za-z]{3})$`)

// ParsePrice splits a price ("60.00 USD") into its amount and currency
// code (upper case); ok is false when the format is wrong, whatever the
// code.
func ParsePrice(s string) (*big.Rat, string, bool) {
	m := priceRe.FindStringSubmatch(s)
	if m == nil {
		return nil, "", false
	}
	amount, ok := new(big.Rat).SetString(m[1] + m[2])
	if !ok {
		return nil, "", false
	}
	return amount, strings.ToUpper(m[3]), true
}

func priceCurrencyKnown(s string) bool {
	_, cur, ok := ParsePrice(s)
	return ok && validation.IsCurrency(cur)
}

// priceInMinorUnits reports whether the amount of a price is a whole
// number of its currency's minor unit ("1.5 JPY" is not: JPY has none;
// "1.00 JPY" is). A price of another form passes: its own rules report it.
func priceInMinorUnits(s string) bool {
	amount, cur, ok := ParsePrice(s)
	digits, known := validation.MinorUnits(cur)
	if !ok || !known {
		return true
	}
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(digits)), nil)
	return new(big.Rat).Mul(amount, new(big.Rat).SetInt(scale)).IsInt()
}

// webURL reports whether s is an absolute URL with a host (https only
// when httpsOnly, else http or https) and no credentials.
func webURL(s string, httpsOnly bool) bool {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || u.Opaque != "" {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return true
	case "http":
		return !httpsOnly
	}
	return false
}

// unsupportedImageExt are file extensions of formats the catalog does not
// take; any other path (.jpg, .jpeg, .gif, .webp, .png, or none, as in
// /image?id=3) is fetched and decoded by the image check.
var unsupportedImageExt = []string{".bmp", ".tif", ".tiff", ".svg", ".svgz", ".heic", ".heif", ".avif", ".ico",
	".psd", ".raw", ".pdf", ".eps", ".ai", ".jxl", ".jp2", ".mp4", ".mov", ".webm", ".avi", ".gifv"}

func imageFormatAllowed(s string) bool {
	u, err := url.Parse(s)
	if err != nil {
		return true // the URL rule reports it
	}
	return !slices.Contains(unsupportedImageExt, strings.ToLower(path.Ext(u.Path)))
}

// gtinFormat: 8, 12, 13 or 14 digits, or an ISBN-10 (9 digits then a
// digit or X).
func gtinFormat(s string) bool {
	switch len(s) {
	case 8, 12, 13, 14:
		return allDigits(s)
	case 10:
		return allDigits(s[:9]) && (allDigits(s[9:]) || s[9] == 'X' || s[9] == 'x')
	}
	return false
}

func allDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// gtinCheckDigit verifies the last digit: the GS1 mod-10 check of GTIN-8,
// -12, -13 and -14, the mod-11 check of an ISBN-10.
func gtinCheckDigit(s string) bool {
	if !gtinFormat(s) {
		return false
	}
	if len(s) == 10 {
		return isbn10Check(s)
	}
	sum := 0
	for i := len(s) - 2; i >= 0; i-- {
		d := int(s[i] - '0')
		if (len(s)-2-i)%2 == 0 {
			d *= 3
		}
		sum += d
	}
	return (10-sum%10)%10 == int(s[len(s)-1]-'0')
}

func isbn10Check(s string) bool {
	sum := 0
	for i := range 10 {
		d := int(s[i] - '0')
		if i == 9 && (s[i] == 'X' || s[i] == 'x') {
			d = 10
		}
		sum += (10 - i) * d
	}
	return sum%11 == 0
}

// productTypeLevels: levels separated by exactly " > ", none empty.
func productTypeLevels(s string) bool {
	for _, level := range strings.Split(s, " > ") {
		if level == "" || level != strings.TrimSpace(level) || strings.Contains(level, ">") {
			return false
		}
	}
	return true
}

// dateTimeLayouts are the ISO 8601 date-times taken in a date range: a
// time zone is required, seconds and fractions are optional.
var dateTimeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00", "2006-01-02T15:04:05Z0700", "2006-01-02T15:04Z0700"}

// parseDateRange reads "<start>/<end>".
func parseDateRange(s string) (time.Time, time.Time, bool) {
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		return time.Time{}, time.Time{}, false
	}
	start, ok1 := parseDateTime(a)
	end, ok2 := parseDateTime(b)
	return start, end, ok1 && ok2
}

func parseDateTime(s string) (time.Time, bool) {
	for _, layout := range dateTimeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// hexColorCode reports a color given as a hex code: #fff, #ff0000, or six
// hex digits with at least one digit (ff0000; not "facade").
func hexColorCode(s string) bool {
	h, hash := strings.CutPrefix(s, "#")
	if !isHex(h) {
		return false
	}
	if hash {
		return len(h) >= 3 && len(h) <= 8
	}
	return len(h) == 6 && strings.ContainsAny(h, "0123456789")
}

func isHex(s string) bool {
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return s != ""
}
