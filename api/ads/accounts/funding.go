package accounts

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// fundingParams are the parameters of the sandbox's funding instrument
// create.
var fundingParams = []string{"currency", "start_time", "type", "end_time", "credit_limit_local_micro", "funded_amount_local_micro"}

// fundingSandboxOnly answers funding instrument writes in production.
const fundingSandboxOnly = "Funding instruments can be created and deleted only in the sandbox"

// createFunding serves POST .../funding_instruments (sandbox only): an
// active funding instrument of the account, of the given type, currency
// and flight. The account check comes first, so a foreign account answers
// as everywhere.
func (m *Module) createFunding(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	a, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	if !adsx.Sandbox(r.Context()) {
		return adsx.NotAllowed(fundingSandboxOnly)
	}
	fi := storage.NewFundingInstrument{
		Currency:               p.Required("currency", 3),
		Type:                   p.RequiredEnum("type", storage.FundingInstrumentTypes),
		CreditLimitLocalMicro:  p.Int64("credit_limit_local_micro", 0, 1<<62),
		FundedAmountLocalMicro: p.Int64("funded_amount_local_micro", 0, 1<<62),
	}
	start := p.RequiredTime("start_time")
	fi.StartTime, fi.EndTime = &start, p.Time("end_time")
	if fi.Currency != "" && !validation.IsCurrency(fi.Currency) {
		p.Fail("currency", fmt.Sprintf("Expected an ISO 4217 currency code in circulation (three capital letters, such as USD), got %q for currency", fi.Currency))
	}
	for _, a := range []struct {
		name   string
		amount *int64
	}{{"credit_limit_local_micro", fi.CreditLimitLocalMicro}, {"funded_amount_local_micro", fi.FundedAmountLocalMicro}} {
		if msg := validation.MicroAmountError(deref(a.amount), fi.Currency); msg != "" {
			p.Fail(a.name, fmt.Sprintf("%s (%d): %s", a.name, *a.amount, msg))
		}
	}
	if fi.EndTime != nil && !start.IsZero() && !fi.EndTime.After(start) {
		p.Fail("end_time", "end_time must be after start_time")
	}
	if err := p.Err(); err != nil {
		return err
	}
	f, err := m.deps.Store.CreateFundingInstrument(r.Context(), a.ID, fi)
	if err != nil {
		return fmt.Errorf("create funding instrument of %s: %w", a.ID, err)
	}
	return adsx.WriteData(w, p, http.StatusOK, fundingRenderer(time.Now())(f))
}

// deleteFunding serves DELETE .../funding_instruments/:id (sandbox only):
// a soft delete answering the instrument with deleted true.
func (m *Module) deleteFunding(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	a, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	if !adsx.Sandbox(r.Context()) {
		return adsx.NotAllowed(fundingSandboxOnly)
	}
	id := r.PathValue("funding_instrument_id")
	f, err := m.deps.Store.DeleteFundingInstrument(r.Context(), a.ID, id)
	if errors.Is(err, storage.ErrNotFound) {
		return adsx.NotFound(codeFundingNotFound, "funding_instrument_id", id)
	}
	if err != nil {
		return fmt.Errorf("delete funding instrument %s: %w", id, err)
	}
	return adsx.WriteData(w, p, http.StatusOK, fundingRenderer(time.Now())(f))
}

// deref is *v, or 0 for nil.
func deref(v *int64) int64 {
	if v == nil {
		return 0
	}
	return *v
}
