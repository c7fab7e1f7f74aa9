package console

import (
	"net/http"

	"github.com/aviary-dev/aviary/storage"
)

// complianceData is the compliance page's and its "jobs" fragment's.
type complianceData struct {
	Base
	Jobs    []complianceRow
	Polling bool // a job is still open: the fragment polls again in 2 s
}

type complianceRow struct {
	storage.ComplianceJob
	AppName string
}

func (s *Server) compliance(w http.ResponseWriter, r *http.Request, v viewer) {
	s.renderCompliance(w, r, v, "")
}

// complianceJobs is the table alone, which the page's htmx polls every
// 2 s while a job is open.
func (s *Server) complianceJobs(w http.ResponseWriter, r *http.Request, v viewer) {
	s.renderCompliance(w, r, v, "jobs")
}

func (s *Server) renderCompliance(w http.ResponseWriter, r *http.Request, v viewer, fragment string) {
	apps, err := s.visibleApps(r.Context(), v)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	names := map[int64]string{}
	ids := make([]int64, len(apps))
	for i, a := range apps {
		ids[i], names[a.ID] = a.ID, a.Name
	}
	jobs, err := s.store.ConsoleComplianceJobs(r.Context(), ids, 100)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	d := complianceData{Base: s.base(&v, "Compliance jobs", "compliance")}
	for _, j := range jobs {
		d.Jobs = append(d.Jobs, complianceRow{ComplianceJob: j, AppName: names[j.AppID]})
		d.Polling = d.Polling || !j.Status.Final()
	}
	s.render(w, r, http.StatusOK, "compliance", fragment, d)
}
