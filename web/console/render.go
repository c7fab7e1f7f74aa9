package console

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/storage/ids"
)

//go:embed templates/*.html
var templateFiles embed.FS

// pages are the console's templates: layout.html wraps every page, which
// defines "title" and "content"; a page may define fragments htmx fetches
// alone (compliance.html's "jobs").
type pages struct {
	byName map[string]*template.Template
}

var funcs = template.FuncMap{
	"id": ids.Format,
	"when": func(t any) string {
		switch v := t.(type) {
		case time.Time:
			if v.IsZero() {
				return ""
			}
			return v.UTC().Format("2006-01-02 15:04:05 UTC")
		case *time.Time:
			if v == nil {
				return ""
			}
			return v.UTC().Format("2006-01-02 15:04:05 UTC")
		}
		return ""
	},
	"join":   strings.Join,
	"micros": micros,
}

func parsePages() (*pages, error) {
	names, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("console: list templates: %w", err)
	}
	p := &pages{byName: map[string]*template.Template{}}
	for _, n := range names {
		if strings.HasSuffix(n, "/layout.html") {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("console: parse %s: %w", n, err)
		}
		p.byName[strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")] = t
	}
	return p, nil
}

// Base is what the layout needs of every page.
type Base struct {
	Title   string
	Section string // the nav entry marked current
	Viewer  *viewer
	CSRF    string
	Notice  string
	// QueueDashboard: /admin/queues/ is there to link to.
	QueueDashboard bool
}

func (s *Server) base(v *viewer, title, section string) Base {
	b := Base{Title: title, Section: section, Viewer: v, Notice: s.kit.Notice(), QueueDashboard: s.cfg.QueueDashboard}
	if v != nil {
		b.CSRF = v.csrf
	}
	return b
}

// render writes page name with data (whose Base the layout reads); with
// fragment set, only that template of the page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name, fragment string, data any) {
	t, ok := s.pages.byName[name]
	if !ok {
		s.kit.Fail(w, r, fmt.Errorf("console: no page %q", name))
		return
	}
	if fragment == "" {
		fragment = "layout.html"
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, fragment, data); err != nil {
		s.kit.Fail(w, r, fmt.Errorf("console: render %s/%s: %w", name, fragment, err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

// problemPage is the error page's data.
type problemPage struct {
	Base
	Detail string
}

// problem renders the console's error page (v nil: not logged in).
func (s *Server) problem(w http.ResponseWriter, r *http.Request, v *viewer, status int, title, detail string) {
	s.render(w, r, status, "problem", "", problemPage{Base: s.base(v, title, ""), Detail: detail})
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }

// safeNext is where a login goes next: a console path, else the apps.
func safeNext(next string) string {
	if strings.HasPrefix(next, "/console/") && !strings.HasPrefix(next, "/console//") && !strings.ContainsAny(next, "\\\r\n") {
		return next
	}
	return "/console/apps"
}
