package web

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
)

//go:embed templates/*.html
var templateFiles embed.FS

// Kit is what web feature packages build pages with.
type Kit struct {
	Sessions *Sessions
	Throttle *Throttle
	Log      *slog.Logger
	pages    map[string]*template.Template
	// notice is a banner every page shows (SetNotice), e.g. that the server
	// runs in development mode over plain HTTP.
	notice string
}

// SetNotice makes every page show text in a banner ("" for none). Call it
// before serving.
func (k *Kit) SetNotice(text string) { k.notice = text }

// Notice is the banner text SetNotice set ("" for none).
func (k *Kit) Notice() string { return k.notice }

// NewKit parses the embedded templates: layout.html wraps every other
// file, which defines "title" and "content".
func NewKit(sessions *Sessions, throttle *Throttle, log *slog.Logger) (*Kit, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	names, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("web: list templates: %w", err)
	}
	k := &Kit{Sessions: sessions, Throttle: throttle, Log: log}
	funcs := template.FuncMap{"notice": func() string { return k.notice }}
	pages := map[string]*template.Template{}
	for _, n := range names {
		if strings.HasSuffix(n, "/layout.html") {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("web: parse %s: %w", n, err)
		}
		pages[strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")] = t
	}
	k.pages = pages
	return k, nil
}

// Render writes page name with data and status. The page is rendered to a
// buffer first, so a template error is a clean 500, not half a page.
func (k *Kit) Render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	t, ok := k.pages[name]
	if !ok {
		k.Fail(w, r, fmt.Errorf("web: no page %q", name))
		return
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout.html", data); err != nil {
		k.Fail(w, r, fmt.Errorf("web: render %s: %w", name, err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

// Problem is the data of the error page.
type Problem struct {
	Title, Detail string
}

// Error renders the error page with status.
func (k *Kit) Error(w http.ResponseWriter, r *http.Request, status int, title, detail string) {
	k.Render(w, r, status, "error", Problem{Title: title, Detail: detail})
}

// Fail logs err and answers 500 with a plain page.
func (k *Kit) Fail(w http.ResponseWriter, r *http.Request, err error) {
	k.Log.ErrorContext(r.Context(), "web request failed", "path", r.URL.Path, "error", err)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = w.Write([]byte("Something went wrong on our side. Please try again.\n"))
}

// ClientAddress is the address logins are throttled by: the connection's
// peer (forwarded headers are not trusted; behind a proxy every client
// shares its address, which still bounds a spray).
func ClientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
