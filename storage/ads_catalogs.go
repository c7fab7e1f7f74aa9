package storage

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Product review statuses, stored in products.status (docs/ads-catalogs.md).
// The API writes PENDING or ACCEPTED when a valid product version is
// stored; the image-check worker (workers/catalogs) moves a PENDING
// version to ACCEPTED or REJECTED and records images_checked_version.
const (
	// ProductPendingImages: the fields are valid and the version has images
	// that the worker has not checked yet.
	ProductPendingImages = "PENDING"
	// ProductAccepted: the fields are valid and every image passed its
	// check (or the product has no image to check).
	ProductAccepted = "ACCEPTED"
	// ProductRejected: an image check failed; errors says which and why.
	ProductRejected = "REJECTED"
)

// ProductStatuses are the values of products.status.
var ProductStatuses = []string{ProductPendingImages, ProductAccepted, ProductRejected}

// Product batch outcomes: the status of one item of a PUT products answer
// (reference values).
const (
	ProductCreateSuccess = "CREATE_SUCCESS"
	ProductUpdateSuccess = "UPDATE_SUCCESS"
	ProductNoChange      = "NO_CHANGE"
	ProductError         = "ERROR"
)

// ProductIssue is one entry of a product's errors or warnings (the JSON
// arrays products.errors and products.warnings hold these objects):
// {"field": "image_link", "rule": "image_size", "message": "..."}.
// Field is the product attribute ("image_link", "additional_image_link[2]"
// for the third additional image), Rule a stable machine name of the rule,
// Message a sentence for people.
type ProductIssue struct {
	Field   string `json:"field"`
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

// Sanitized is the issue as it may be stored: every field valid UTF-8
// without control characters. Messages can quote what a remote server or
// a client sent; PostgreSQL refuses a NUL (or invalid UTF-8) in jsonb, so
// an unsanitized issue would fail its statement every time.
func (i ProductIssue) Sanitized() ProductIssue {
	return ProductIssue{Field: SanitizeIssueText(i.Field), Rule: SanitizeIssueText(i.Rule), Message: SanitizeIssueText(i.Message)}
}

// SanitizeIssueText drops invalid UTF-8 and control characters (NUL,
// newlines, escapes, C1 controls) from s.
func SanitizeIssueText(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, unicode.IsControl) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, ""))
}

// SanitizeIssues returns the issues sanitized (an empty list for nil, so
// it never encodes as JSON null).
func SanitizeIssues(list []ProductIssue) []ProductIssue {
	out := make([]ProductIssue, len(list))
	for i, it := range list {
		out[i] = it.Sanitized()
	}
	return out
}

// ProductCatalog is a user's product catalog (one per user and side).
type ProductCatalog struct {
	ID     string
	UserID int64
	Name   string
	// Sandbox is the listener side the catalog belongs to: it is seen
	// only through that listener.
	Sandbox   bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ProductFields are the merchant-submitted attributes of a product, stored
// as products.fields (JSON, keys as in the API). Optional attributes are
// nil pointers when absent.
type ProductFields struct {
	ID                     string  `json:"id"`
	Title                  string  `json:"title"`
	Description            string  `json:"description"`
	Availability           string  `json:"availability"`
	Condition              string  `json:"condition"`
	Price                  string  `json:"price"`
	Link                   string  `json:"link"`
	ImageLink              string  `json:"image_link"`
	Brand                  *string `json:"brand,omitempty"`
	GTIN                   *string `json:"gtin,omitempty"`
	MPN                    *string `json:"mpn,omitempty"`
	MobileLink             *string `json:"mobile_link,omitempty"`
	AdditionalImageLink    *string `json:"additional_image_link,omitempty"`
	GoogleProductCategory  *string `json:"google_product_category,omitempty"`
	ProductType            *string `json:"product_type,omitempty"`
	Inventory              *int64  `json:"inventory,omitempty"`
	SalePrice              *string `json:"sale_price,omitempty"`
	SalePriceEffectiveDate *string `json:"sale_price_effective_date,omitempty"`
	ItemGroupID            *string `json:"item_group_id,omitempty"`
	Gender                 *string `json:"gender,omitempty"`
	Color                  *string `json:"color,omitempty"`
	Size                   *string `json:"size,omitempty"`
	AgeGroup               *string `json:"age_group,omitempty"`
	CustomLabel0           *string `json:"custom_label_0,omitempty"`
	CustomLabel1           *string `json:"custom_label_1,omitempty"`
	CustomLabel2           *string `json:"custom_label_2,omitempty"`
	CustomLabel3           *string `json:"custom_label_3,omitempty"`
	CustomLabel4           *string `json:"custom_label_4,omitempty"`
}

// Product is a stored product: its fields, the service key, and its
// review outcome.
type Product struct {
	CatalogID    string
	Key          string
	ItemGroupKey *string
	Fields       ProductFields
	Status       string
	Errors       []ProductIssue
	Warnings     []ProductIssue
	Version      int64
	Seq          int64
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// ProductUpsert is one valid product of a batch to create or update; it
// is stored PENDING (every valid product has an image_link to check).
type ProductUpsert struct {
	Fields ProductFields
	// Key is the product_key the client sent, if any: it must be the key
	// of the stored product with this id.
	Key      *string
	Warnings []ProductIssue
}

// ProductUpserted is the outcome of storing one ProductUpsert.
type ProductUpserted struct {
	ID      string
	Key     string
	Status  string
	Version int64
	// Outcome is ProductCreateSuccess, ProductUpdateSuccess,
	// ProductNoChange (the fields equal the stored version's: nothing
	// written) or ProductError (Errors says why: nothing written).
	Outcome string
	Errors  []ProductIssue
}

// ProductFilter narrows a product list of one catalog.
type ProductFilter struct {
	CatalogID string
	// Sandbox is the listener side: a catalog of the other side lists
	// nothing.
	Sandbox bool
	// ItemGroupKey lists every variant of one group ("" for the first
	// variant of each group and all ungrouped products).
	ItemGroupKey string
}
