package console

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/aviary-dev/aviary/storage"
)

// AdsStore is what the ads pages read (storage/postgres.DB): the ads API's
// own list functions, and the console's reads of accounts and catalogs a
// viewer sees, audience batch history, products and the insights log.
type AdsStore interface {
	ConsoleAdAccounts(ctx context.Context, userID int64, all bool) ([]storage.ConsoleAdAccount, error)
	ConsoleAdAccount(ctx context.Context, userID int64, all bool, id string) (storage.ConsoleAdAccount, error)
	ListFundingInstruments(ctx context.Context, accountID string, ids []string, opts storage.ListOptions) (storage.Page[storage.FundingInstrument], error)
	ListCampaigns(ctx context.Context, f storage.CampaignFilter, opts storage.ListOptions) (storage.Page[storage.Campaign], error)
	ListLineItems(ctx context.Context, f storage.LineItemFilter, opts storage.ListOptions) (storage.Page[storage.LineItem], error)
	ListCustomAudiences(ctx context.Context, f storage.CustomAudienceFilter, opts storage.ListOptions) (storage.Page[storage.CustomAudienceView], error)
	CustomAudience(ctx context.Context, accountID, id string, withDeleted bool) (storage.CustomAudienceView, error)
	ConsoleAudienceBatches(ctx context.Context, audienceID, recordedBy string, limit int) ([]storage.ConsoleAudienceBatch, error)
	ConsoleProductCatalogs(ctx context.Context, userID int64, all bool) ([]storage.ConsoleCatalog, error)
	ConsoleProductCatalog(ctx context.Context, userID int64, all bool, id string) (storage.ConsoleCatalog, error)
	ConsoleCatalogProducts(ctx context.Context, catalogID string, limit int) ([]storage.Product, error)
	ConsoleInsightQueries(ctx context.Context, accountID string, limit int) ([]storage.InsightQueryLog, error)
}

// adsListCount is how many rows an ads table shows; beyond, the page says
// more exist (the API lists them all).
const adsListCount = 200

// adsRoutes mounts the ads pages (docs/console.md, "Ads").
func (s *Server) adsRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /console/ads", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/console/ads/accounts", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /console/ads/accounts", s.page(s.adAccounts))
	mux.HandleFunc("GET /console/ads/accounts/{account}", s.page(s.adAccount))
	mux.HandleFunc("GET /console/ads/accounts/{account}/audiences", s.page(s.audiences))
	mux.HandleFunc("GET /console/ads/accounts/{account}/audiences/{audience}", s.page(s.audience))
	mux.HandleFunc("GET /console/ads/accounts/{account}/audiences/{audience}/batches", s.page(s.audienceBatches))
	mux.HandleFunc("GET /console/ads/accounts/{account}/insights", s.page(s.insightQueries))
	mux.HandleFunc("GET /console/ads/catalogs", s.page(s.catalogs))
	mux.HandleFunc("GET /console/ads/catalogs/{catalog}", s.page(s.catalog))
	mux.HandleFunc("GET /console/ads/catalogs/{catalog}/products", s.page(s.catalogProducts))
}

// visibleAdAccount loads the account of the path's {account} if the
// viewer may see it: one they own or were granted, any for an
// administrator. Another user's account is not found (404), as an unknown
// one.
func (s *Server) visibleAdAccount(w http.ResponseWriter, r *http.Request, v viewer) (storage.ConsoleAdAccount, bool) {
	a, err := s.store.ConsoleAdAccount(r.Context(), v.User.ID, v.Admin, r.PathValue("account"))
	if !s.found(w, r, v, err) {
		return a, false
	}
	return a, true
}

// adsList are the list options of an ads table: live rows by creation.
func adsList() storage.ListOptions {
	return storage.ListOptions{Count: adsListCount, Sort: storage.Sort{Field: "created_at"}}
}

type adAccountsData struct {
	Base
	Accounts []storage.ConsoleAdAccount
}

func (s *Server) adAccounts(w http.ResponseWriter, r *http.Request, v viewer) {
	list, err := s.store.ConsoleAdAccounts(r.Context(), v.User.ID, v.Admin)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "ads_accounts", "", adAccountsData{Base: s.base(&v, "Ads accounts", "ads"), Accounts: list})
}

type adAccountData struct {
	Base
	Account   storage.ConsoleAdAccount
	Funding   []storage.FundingInstrument
	Campaigns []storage.Campaign
	LineItems []lineItemRow
	// More names the tables cut at adsListCount rows.
	More []string
}

type lineItemRow struct {
	storage.LineItem
	CampaignName string
}

func (s *Server) adAccount(w http.ResponseWriter, r *http.Request, v viewer) {
	a, ok := s.visibleAdAccount(w, r, v)
	if !ok {
		return
	}
	ctx := r.Context()
	d := adAccountData{Base: s.base(&v, "Ads account "+a.Name, "ads"), Account: a}
	funding, err := s.store.ListFundingInstruments(ctx, a.ID, nil, adsList())
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	campaigns, err := s.store.ListCampaigns(ctx, storage.CampaignFilter{AccountID: a.ID, WithDraft: true}, adsList())
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	items, err := s.store.ListLineItems(ctx, storage.LineItemFilter{AccountID: a.ID, WithDraft: true}, adsList())
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	d.Funding, d.Campaigns = funding.Items, campaigns.Items
	names := map[string]string{}
	for _, c := range campaigns.Items {
		names[c.ID] = c.Name
	}
	for _, l := range items.Items {
		d.LineItems = append(d.LineItems, lineItemRow{LineItem: l, CampaignName: names[l.CampaignID]})
	}
	for name, next := range map[string]*storage.Position{"funding instruments": funding.Next, "campaigns": campaigns.Next, "line items": items.Next} {
		if next != nil {
			d.More = append(d.More, name)
		}
	}
	s.render(w, r, http.StatusOK, "ads_account", "", d)
}

type audiencesData struct {
	Base
	Account   storage.ConsoleAdAccount
	Audiences []storage.CustomAudienceView
	More      bool
}

func (s *Server) audiences(w http.ResponseWriter, r *http.Request, v viewer) {
	a, ok := s.visibleAdAccount(w, r, v)
	if !ok {
		return
	}
	page, err := s.store.ListCustomAudiences(r.Context(), storage.CustomAudienceFilter{AccountID: a.ID}, adsList())
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "ads_audiences", "", audiencesData{Base: s.base(&v, "Custom audiences of "+a.Name, "ads"),
		Account: a, Audiences: page.Items, More: page.Next != nil})
}

// audienceData is the audience page's and its "batches" fragment's.
type audienceData struct {
	Base
	Account  storage.ConsoleAdAccount
	Audience storage.CustomAudienceView
	Batches  []batchRow
	Polling  bool // a batch awaits its worker: the fragment polls again in 2 s
}

type batchRow struct {
	storage.ConsoleAudienceBatch
	Class string // the status colour
}

// audienceBatchCount is how many batches the history shows.
const audienceBatchCount = 100

func (s *Server) audience(w http.ResponseWriter, r *http.Request, v viewer) {
	s.renderAudience(w, r, v, "")
}

// audienceBatches is the batch table alone, which the page's htmx polls
// every 2 s while a batch is pending.
func (s *Server) audienceBatches(w http.ResponseWriter, r *http.Request, v viewer) {
	s.renderAudience(w, r, v, "batches")
}

func (s *Server) renderAudience(w http.ResponseWriter, r *http.Request, v viewer, fragment string) {
	a, ok := s.visibleAdAccount(w, r, v)
	if !ok {
		return
	}
	aud, err := s.store.CustomAudience(r.Context(), a.ID, r.PathValue("audience"), true)
	if !s.found(w, r, v, err) {
		return
	}
	recordedBy := "" // the owner sees every batch; an account it is shared with, its own
	if !aud.IsOwner {
		recordedBy = a.ID
	}
	batches, err := s.store.ConsoleAudienceBatches(r.Context(), aud.ID, recordedBy, audienceBatchCount)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	d := audienceData{Base: s.base(&v, "Custom audience "+aud.Name, "ads"), Account: a, Audience: aud}
	for _, b := range batches {
		d.Batches = append(d.Batches, batchRow{ConsoleAudienceBatch: b, Class: statusClass(string(b.State))})
		d.Polling = d.Polling || !b.State.Settled()
	}
	s.render(w, r, http.StatusOK, "ads_audience", fragment, d)
}

// statusClass is the stylesheet's colour of a state: settled well, failed
// or neither.
func statusClass(state string) string {
	switch state {
	case string(storage.BatchApplied), storage.ProductAccepted:
		return "status-complete"
	case string(storage.BatchFailed), storage.ProductRejected:
		return "status-failed"
	}
	return ""
}

type insightsData struct {
	Base
	Account storage.ConsoleAdAccount
	Queries []storage.InsightQueryLog
}

// insightQueryCount is how many logged queries the page shows.
const insightQueryCount = 100

func (s *Server) insightQueries(w http.ResponseWriter, r *http.Request, v viewer) {
	a, ok := s.visibleAdAccount(w, r, v)
	if !ok {
		return
	}
	list, err := s.store.ConsoleInsightQueries(r.Context(), a.ID, insightQueryCount)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "ads_insights", "", insightsData{Base: s.base(&v, "Keyword insights of "+a.Name, "ads"),
		Account: a, Queries: list})
}

type catalogsData struct {
	Base
	Catalogs []storage.ConsoleCatalog
}

func (s *Server) catalogs(w http.ResponseWriter, r *http.Request, v viewer) {
	list, err := s.store.ConsoleProductCatalogs(r.Context(), v.User.ID, v.Admin)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "ads_catalogs", "", catalogsData{Base: s.base(&v, "Product catalogs", "ads"), Catalogs: list})
}

// catalogData is the catalog page's and its "products" fragment's.
type catalogData struct {
	Base
	Catalog  storage.ConsoleCatalog
	Products []productRow
	More     bool
	Polling  bool // a product awaits its image check: the fragment polls again in 2 s
}

type productRow struct {
	storage.Product
	Class string
}

// catalogProductCount is how many products the catalog page shows.
const catalogProductCount = 500

func (s *Server) catalog(w http.ResponseWriter, r *http.Request, v viewer) {
	s.renderCatalog(w, r, v, "")
}

// catalogProducts is the product table alone, which the page's htmx polls
// every 2 s while a product awaits its image check.
func (s *Server) catalogProducts(w http.ResponseWriter, r *http.Request, v viewer) {
	s.renderCatalog(w, r, v, "products")
}

func (s *Server) renderCatalog(w http.ResponseWriter, r *http.Request, v viewer, fragment string) {
	c, err := s.store.ConsoleProductCatalog(r.Context(), v.User.ID, v.Admin, r.PathValue("catalog"))
	if !s.found(w, r, v, err) {
		return
	}
	products, err := s.store.ConsoleCatalogProducts(r.Context(), c.ID, catalogProductCount+1)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	d := catalogData{Base: s.base(&v, "Product catalog "+c.Name, "ads"), Catalog: c, More: len(products) > catalogProductCount}
	for _, p := range products[:min(len(products), catalogProductCount)] {
		d.Products = append(d.Products, productRow{Product: p, Class: statusClass(p.Status)})
		d.Polling = d.Polling || p.Status == storage.ProductPendingImages
	}
	s.render(w, r, http.StatusOK, "ads_catalog", fragment, d)
}

// micros renders an amount in micros of a currency as a decimal number of
// it ("1.5 USD"); nil is "".
func micros(amount *int64, currency string) string {
	if amount == nil {
		return ""
	}
	n := *amount
	sign := ""
	if n < 0 {
		sign, n = "-", -n
	}
	s := strconv.FormatInt(n/1_000_000, 10)
	if frac := n % 1_000_000; frac != 0 {
		s += "." + strings.TrimRight(strconv.FormatInt(1_000_000+frac, 10)[1:], "0")
	}
	return strings.TrimSpace(sign + s + " " + currency)
}
