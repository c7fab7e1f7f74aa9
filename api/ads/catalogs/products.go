package catalogs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/domain/products"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/tasks"
)

// productListSpec: products list in submission order, 100 a page (1 to 100).
var productListSpec = adsx.ListSpec{
	Listing:      storage.ListingProducts,
	Default:      storage.Sort{Field: "submission_order"},
	DefaultCount: 100,
	MaxCount:     100,
}

// Lists are the module's list specs (checked against the store's columns
// by TestListSpecsMapToColumns in package api).
func (*Module) Lists() []adsx.ListSpec { return []adsx.ListSpec{productListSpec} }

func (m *Module) listProducts(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	f := storage.ProductFilter{Sandbox: adsx.Sandbox(r.Context())}
	if g := p.ID("item_group_key"); g != nil {
		f.ItemGroupKey = *g
	}
	opts := m.deps.Kit.List(p, productListSpec)
	if err := p.Err(); err != nil {
		return err
	}
	c, err := m.catalog(r)
	if err != nil {
		return err
	}
	f.CatalogID = c.ID
	page, err := m.deps.Store.ListProducts(r.Context(), f, opts)
	if err != nil {
		return fmt.Errorf("list products of catalog %s: %w", c.ID, err)
	}
	return adsx.WriteList(w, m.deps.Kit, p, page, renderProduct)
}

// batchBody is the PUT products body.
type batchBody struct {
	Products *[]json.RawMessage `json:"products"`
}

// readBatch reads the JSON body: {"products": [1 to 25 objects]}; the
// items themselves are checked one by one by the validator.
func readBatch(r *http.Request) ([]json.RawMessage, error) {
	raw, err := adsx.ReadJSONBody(r)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var body batchBody
	if err := dec.Decode(&body); err != nil {
		return nil, adsx.Invalid("body", fmt.Sprintf("The request body must be a JSON object {\"products\": [...]}: %v", err))
	}
	if dec.More() {
		return nil, adsx.Invalid("body", "The request body must hold a single JSON object")
	}
	switch {
	case body.Products == nil:
		return nil, adsx.Missing("products")
	case len(*body.Products) == 0:
		return nil, adsx.Invalid("products", "products must list at least one product")
	case len(*body.Products) > products.MaxBatch:
		return nil, adsx.Invalid("products", fmt.Sprintf("products takes at most %d products, got %d",
			products.MaxBatch, len(*body.Products)))
	}
	return *body.Products, nil
}

// batchResult is one item of the answer, in request order.
type batchResult struct {
	Warnings     []products.Issue `json:"warnings"`
	Errors       []products.Issue `json:"errors"`
	ProductKey   *string          `json:"product_key"`
	ID           *string          `json:"id"`
	Status       string           `json:"status"`
	ReviewStatus *string          `json:"review_status"`
}

type batchAnswer struct {
	ProductsResponse []batchResult `json:"products_response"`
}

// upsertProducts is the PUT products batch: every item validated, the
// valid ones stored in one transaction, their image checks enqueued after
// the commit, and one answer item per request item.
func (m *Module) upsertProducts(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	c, err := m.catalog(r)
	if err != nil {
		return err
	}
	raws, err := readBatch(r)
	if err != nil {
		return err
	}
	results := m.validator.Batch(raws)
	var upserts []storage.ProductUpsert
	for _, res := range results {
		if res.Valid() {
			upserts = append(upserts, storage.ProductUpsert{Fields: toFields(res.Product), Key: res.Product.ProductKey,
				Warnings: toStorageIssues(res.Warnings)})
		}
	}
	var stored []storage.ProductUpserted
	if len(upserts) > 0 {
		stored, err = m.deps.Store.UpsertProducts(r.Context(), adsx.UserID(r), adsx.Sandbox(r.Context()), c.ID, upserts)
		if err != nil {
			return catalogErr(err, c.ID)
		}
		m.enqueueChecks(r.Context(), c.ID, stored)
	}
	return adsx.WriteData(w, p, http.StatusOK, batchAnswer{ProductsResponse: answer(results, stored)})
}

// enqueueParallel bounds the concurrent enqueues of one batch.
const enqueueParallel = 8

// enqueueChecks hands the image check of every written version to the
// queue, a few at a time (a failure is logged and left to the worker's
// sweeper, which finds the version by images_checked_version < version).
func (m *Module) enqueueChecks(ctx context.Context, catalogID string, stored []storage.ProductUpserted) {
	var wg sync.WaitGroup
	slots := make(chan struct{}, enqueueParallel)
	for _, o := range stored {
		if o.Outcome != storage.ProductCreateSuccess && o.Outcome != storage.ProductUpdateSuccess {
			continue
		}
		task, err := tasks.NewCatalogImages(o.Key, tasks.CatalogImages{CatalogID: catalogID, ProductID: o.ID, Version: o.Version})
		if err != nil {
			m.deps.Kit.Log().ErrorContext(ctx, "build catalog images task", "product_key", o.Key, "err", err)
			continue
		}
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			m.deps.Kit.Enqueue(ctx, task)
		})
	}
	wg.Wait()
}

// answer pairs each request item with its outcome: the validation errors
// of an invalid item, else the store's outcome (valid items are stored in
// request order).
func answer(results []products.Result, stored []storage.ProductUpserted) []batchResult {
	out := make([]batchResult, len(results))
	next := 0
	for i, res := range results {
		b := batchResult{Warnings: nonNil(res.Warnings), Errors: nonNil(res.Errors), Status: storage.ProductError}
		if res.Product.ID != "" {
			b.ID = &res.Product.ID
		}
		if res.Valid() {
			o := stored[next]
			next++
			b.Status = o.Outcome
			b.Errors = nonNil(toValidationIssues(o.Errors))
			if o.Outcome != storage.ProductError {
				b.ProductKey, b.ReviewStatus = &o.Key, &o.Status
			}
		}
		out[i] = b
	}
	return out
}

func nonNil(issues []products.Issue) []products.Issue {
	if issues == nil {
		return []products.Issue{}
	}
	return issues
}

func toStorageIssues(in []products.Issue) []storage.ProductIssue {
	out := make([]storage.ProductIssue, len(in))
	for i, is := range in {
		out[i] = storage.ProductIssue(is)
	}
	return out
}

func toValidationIssues(in []storage.ProductIssue) []products.Issue {
	out := make([]products.Issue, len(in))
	for i, is := range in {
		out[i] = products.Issue(is)
	}
	return out
}

// toFields is a valid product's stored attributes (product_key and
// item_group_key are the service's, not stored as sent).
func toFields(p products.Product) storage.ProductFields {
	return storage.ProductFields{
		ID: p.ID, Title: p.Title, Description: p.Description, Availability: p.Availability, Condition: p.Condition,
		Price: p.Price, Link: p.Link, ImageLink: p.ImageLink, Brand: p.Brand, GTIN: p.GTIN, MPN: p.MPN,
		MobileLink: p.MobileLink, AdditionalImageLink: p.AdditionalImageLink, GoogleProductCategory: p.GoogleProductCategory,
		ProductType: p.ProductType, Inventory: p.Inventory, SalePrice: p.SalePrice, SalePriceEffectiveDate: p.SalePriceEffectiveDate,
		ItemGroupID: p.ItemGroupID, Gender: p.Gender, Color: p.Color, Size: p.Size, AgeGroup: p.AgeGroup,
		CustomLabel0: p.CustomLabel0, CustomLabel1: p.CustomLabel1, CustomLabel2: p.CustomLabel2,
		CustomLabel3: p.CustomLabel3, CustomLabel4: p.CustomLabel4,
	}
}
