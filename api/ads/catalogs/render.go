package catalogs

import (
	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/storage"
)

// catalogJSON is the product catalog object.
type catalogJSON struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

func renderCatalog(c storage.ProductCatalog) catalogJSON {
	return catalogJSON{ID: c.ID, Name: c.Name, CreatedAt: adsx.Time(c.CreatedAt), UpdatedAt: adsx.Time(c.UpdatedAt)}
}

// productJSON is the product object of the reference (every attribute,
// null when absent) with the service's review: review_status and the
// errors and warnings of validation and image checks.
type productJSON struct {
	ID                     string                 `json:"id"`
	ProductKey             string                 `json:"product_key"`
	Title                  string                 `json:"title"`
	Description            string                 `json:"description"`
	Availability           string                 `json:"availability"`
	Condition              string                 `json:"condition"`
	Price                  string                 `json:"price"`
	Link                   string                 `json:"link"`
	ImageLink              string                 `json:"image_link"`
	Brand                  *string                `json:"brand"`
	GTIN                   *string                `json:"gtin"`
	MPN                    *string                `json:"mpn"`
	MobileLink             *string                `json:"mobile_link"`
	AdditionalImageLink    *string                `json:"additional_image_link"`
	GoogleProductCategory  *string                `json:"google_product_category"`
	ProductType            *string                `json:"product_type"`
	Inventory              *int64                 `json:"inventory"`
	SalePrice              *string                `json:"sale_price"`
	SalePriceEffectiveDate *string                `json:"sale_price_effective_date"`
	ItemGroupID            *string                `json:"item_group_id"`
	ItemGroupKey           *string                `json:"item_group_key"`
	Gender                 *string                `json:"gender"`
	Color                  *string                `json:"color"`
	Size                   *string                `json:"size"`
	AgeGroup               *string                `json:"age_group"`
	CustomLabel0           *string                `json:"custom_label_0"`
	CustomLabel1           *string                `json:"custom_label_1"`
	CustomLabel2           *string                `json:"custom_label_2"`
	CustomLabel3           *string                `json:"custom_label_3"`
	CustomLabel4           *string                `json:"custom_label_4"`
	ReviewStatus           string                 `json:"review_status"`
	Errors                 []storage.ProductIssue `json:"errors"`
	Warnings               []storage.ProductIssue `json:"warnings"`
	CreatedAt              string                 `json:"created_at"`
	UpdatedAt              string                 `json:"updated_at"`
}

func renderProduct(p storage.Product) productJSON {
	f := p.Fields
	return productJSON{
		ID: f.ID, ProductKey: p.Key, Title: f.Title, Description: f.Description, Availability: f.Availability,
		Condition: f.Condition, Price: f.Price, Link: f.Link, ImageLink: f.ImageLink, Brand: f.Brand, GTIN: f.GTIN, MPN: f.MPN,
		MobileLink: f.MobileLink, AdditionalImageLink: f.AdditionalImageLink, GoogleProductCategory: f.GoogleProductCategory,
		ProductType: f.ProductType, Inventory: f.Inventory, SalePrice: f.SalePrice, SalePriceEffectiveDate: f.SalePriceEffectiveDate,
		ItemGroupID: f.ItemGroupID, ItemGroupKey: p.ItemGroupKey, Gender: f.Gender, Color: f.Color, Size: f.Size,
		AgeGroup: f.AgeGroup, CustomLabel0: f.CustomLabel0, CustomLabel1: f.CustomLabel1, CustomLabel2: f.CustomLabel2,
		CustomLabel3: f.CustomLabel3, CustomLabel4: f.CustomLabel4,
		ReviewStatus: p.Status, Errors: issues(p.Errors), Warnings: issues(p.Warnings),
		CreatedAt: adsx.Time(p.CreatedAt), UpdatedAt: adsx.Time(p.UpdatedAt),
	}
}

func issues(in []storage.ProductIssue) []storage.ProductIssue {
	if in == nil {
		return []storage.ProductIssue{}
	}
	return in
}
