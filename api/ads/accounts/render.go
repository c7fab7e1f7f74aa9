package accounts

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/storage"
)

// account is the Account object.
type account struct {
	ID               string  `json:"id"`
	Name             string  `json:"name"`
	BusinessName     *string `json:"business_name"`
	BusinessID       *string `json:"business_id"`
	Timezone         string  `json:"timezone"`
	TimezoneSwitchAt *string `json:"timezone_switch_at"`
	ApprovalStatus   string  `json:"approval_status"`
	IndustryType     string  `json:"industry_type"`
	CreatedAt        string  `json:"created_at"`
	UpdatedAt        string  `json:"updated_at"`
	Deleted          bool    `json:"deleted"`
}

func renderAccount(a storage.AdAccount) account {
	return account{ID: a.ID, Name: a.Name, BusinessName: optString(a.BusinessName), BusinessID: optString(a.BusinessID),
		Timezone: a.Timezone, TimezoneSwitchAt: adsx.OptTime(a.TimezoneSwitchAt), ApprovalStatus: a.ApprovalStatus,
		IndustryType: a.IndustryType, CreatedAt: adsx.Time(a.CreatedAt), UpdatedAt: adsx.Time(a.UpdatedAt), Deleted: a.Deleted}
}

// optString is s, or nil (null) when it is empty.
func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// accountApp is the Account app object.
type accountApp struct {
	ID                        string  `json:"id"`
	AppStoreIdentifier        string  `json:"app_store_identifier"`
	ConversionTrackingEnabled bool    `json:"conversion_tracking_enabled"`
	DeepLinkPattern           *string `json:"deep_link_pattern"`
	OSType                    string  `json:"os_type"`
	CreatedAt                 string  `json:"created_at"`
	UpdatedAt                 string  `json:"updated_at"`
	Deleted                   bool    `json:"deleted"`
}

func renderApp(a storage.AccountApp) accountApp {
	return accountApp{ID: a.ID, AppStoreIdentifier: a.AppStoreIdentifier, ConversionTrackingEnabled: a.ConversionTrackingEnabled,
		DeepLinkPattern: a.DeepLinkPattern, OSType: a.OSType, CreatedAt: adsx.Time(a.CreatedAt), UpdatedAt: adsx.Time(a.UpdatedAt),
		Deleted: a.Deleted}
}

// fundingInstrument is the Funding instrument object.
type fundingInstrument struct {
	ID                        string   `json:"id"`
	AccountID                 string   `json:"account_id"`
	Name                      string   `json:"name"`
	Description               string   `json:"description"`
	Type                      string   `json:"type"`
	Currency                  string   `json:"currency"`
	EntityStatus              string   `json:"entity_status"`
	StartTime                 string   `json:"start_time"`
	EndTime                   *string  `json:"end_time"`
	CreditLimitLocalMicro     *int64   `json:"credit_limit_local_micro"`
	FundedAmountLocalMicro    *int64   `json:"funded_amount_local_micro"`
	CreditRemainingLocalMicro *int64   `json:"credit_remaining_local_micro"`
	IOHeader                  *string  `json:"io_header"`
	Cancelled                 bool     `json:"cancelled"`
	AbleToFund                bool     `json:"able_to_fund"`
	ReasonsNotAbleToFund      []string `json:"reasons_not_able_to_fund"`
	CreatedAt                 string   `json:"created_at"`
	UpdatedAt                 string   `json:"updated_at"`
	Deleted                   bool     `json:"deleted"`
}

// fundingRenderer renders funding instruments as of now.
func fundingRenderer(now time.Time) func(storage.FundingInstrument) fundingInstrument {
	return func(f storage.FundingInstrument) fundingInstrument {
		reasons := f.ReasonsNotAbleToFund(now)
		return fundingInstrument{ID: f.ID, AccountID: f.AccountID, Name: f.Name, Description: f.Description, Type: f.Type,
			Currency: f.Currency, EntityStatus: f.EntityStatus, StartTime: adsx.Time(f.StartTime), EndTime: adsx.OptTime(f.EndTime),
			CreditLimitLocalMicro: f.CreditLimitLocalMicro, FundedAmountLocalMicro: f.FundedAmountLocalMicro,
			CreditRemainingLocalMicro: f.CreditRemainingLocalMicro, IOHeader: f.IOHeader, Cancelled: f.Cancelled,
			AbleToFund: len(reasons) == 0, ReasonsNotAbleToFund: reasons,
			CreatedAt: adsx.Time(f.CreatedAt), UpdatedAt: adsx.Time(f.UpdatedAt), Deleted: f.Deleted}
	}
}

// historyEntry is the Account history entry object.
type historyEntry struct {
	ChangeBy   changeBy        `json:"change_by"`
	Changes    json.RawMessage `json:"changes"`
	ChangeTime string          `json:"change_time"`
	EntityID   string          `json:"entity_id"`
	Entity     string          `json:"entity"`
	EntityData json.RawMessage `json:"entity_data"`
	ChangeType string          `json:"change_type"`
}

type changeBy struct {
	UserID   *string `json:"user_id"`
	Platform string  `json:"platform"`
}

func renderHistory(h storage.HistoryEntry) historyEntry {
	var by *string
	if h.ChangeByUserID != nil {
		s := strconv.FormatInt(*h.ChangeByUserID, 10)
		by = &s
	}
	return historyEntry{ChangeBy: changeBy{UserID: by, Platform: h.ChangePlatform}, Changes: jsonOr(h.Changes),
		ChangeTime: adsx.Time(h.ChangeTime), EntityID: h.EntityID, Entity: h.EntityType, EntityData: jsonOr(h.EntityData),
		ChangeType: h.ChangeType}
}

// jsonOr is raw, or {} when it is empty.
func jsonOr(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage(`{}`)
	}
	return raw
}
