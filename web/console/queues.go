package console

import (
	"cmp"
	"net/http"
	"slices"
)

// queuesData is the queue depths page's.
type queuesData struct {
	Base
	Queues      []Queue
	Unavailable bool
}

// queues shows every work queue's depth, from the source /_aviary/health
// reads, with a link to the queue dashboard when it is mounted.
func (s *Server) queues(w http.ResponseWriter, r *http.Request, v viewer) {
	d := queuesData{Base: s.base(&v, "Queues", "queues")}
	if s.cfg.Queues == nil {
		d.Unavailable = true
	} else if qs, err := s.cfg.Queues(r.Context()); err != nil {
		s.log.WarnContext(r.Context(), "console: queue depths", "error", err)
		d.Unavailable = true
	} else {
		slices.SortFunc(qs, func(a, b Queue) int { return cmp.Compare(a.Name, b.Name) })
		d.Queues = qs
	}
	s.render(w, r, http.StatusOK, "queues", "", d)
}
