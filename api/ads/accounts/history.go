package accounts

import (
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/storage"
)

// historyParams are the parameters of GET account_history.
var historyParams = []string{"entity_type", "entity_id", "start_time", "end_time", "user_id", "count", "cursor"}

// maxEntityID bounds entity_id (ads ids are short base-36 text).
const maxEntityID = 64

// historyList is how GET account_history pages: by change time, oldest
// first; it takes no sort_by.
var historyList = adsx.ListSpec{Listing: storage.ListingAccountHistory, Default: storage.Sort{Field: "change_time"}}

// history serves GET /12/accounts/:account_id/account_history.
func (m *Module) history(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	a, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	q := historyQuery(p)
	q.AccountID = a.ID
	opts := m.deps.Kit.List(p, historyList)
	if err := p.Err(); err != nil {
		return err
	}
	page, err := m.deps.Store.AccountHistory(r.Context(), q, opts)
	if err != nil {
		return fmt.Errorf("account history: %w", err)
	}
	return adsx.WriteList(w, m.deps.Kit, p, page, renderHistory)
}

// historyQuery parses the entity and time window of a history request.
func historyQuery(p *adsx.Params) storage.HistoryQuery {
	q := storage.HistoryQuery{
		EntityType: p.RequiredEnum("entity_type", storage.HistoryEntityTypes),
		EntityID:   p.Required("entity_id", maxEntityID),
		Start:      wholeHour(p, "start_time"),
		End:        wholeHour(p, "end_time"),
		UserID:     p.Int64("user_id", 1, math.MaxInt64),
	}
	if !q.Start.IsZero() && !q.End.IsZero() && !q.End.After(q.Start) {
		p.Fail("end_time", "end_time must be after start_time")
	}
	return q
}

// wholeHour parses a required time that must fall on a whole hour.
func wholeHour(p *adsx.Params, name string) time.Time {
	t := p.RequiredTime(name)
	if !t.IsZero() && !t.Equal(t.Truncate(time.Hour)) {
		p.Fail(name, fmt.Sprintf("%s must be expressed in whole hours (0 minutes and 0 seconds)", name))
		return time.Time{}
	}
	return t
}
