package selfdoc

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
)

// viewPage is the rendered view: one table per surface, self-contained
// (inline style, no script, no CDN).
var viewPage = template.Must(template.New("docs").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Aviary API {{.Version}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:1rem auto;max-width:72rem;padding:0 1rem;color:#111;background:#fff;line-height:1.4}
table{border-collapse:collapse;width:100%;margin-bottom:2rem}
th,td{text-align:left;vertical-align:top;padding:.35rem .5rem;border-bottom:1px solid #ccc}
th{background:#f2f2f2}
code{font-size:.95em}
.m{font-weight:700;font-family:monospace}
.note{color:#444}
a{color:#0645ad}
</style>
</head>
<body>
<main>
<h1>Aviary API <small>{{.Version}}</small></h1>
<p>Every endpoint this server serves, from its route table. The machine-readable description is
<a href="/2/openapi.json">/2/openapi.json</a> (OpenAPI 3.0).{{if .Platform}} Operations marked
&ldquo;platform&rdquo; use the schemas of the platform's description {{.Platform}}.{{end}}</p>
{{range .Surfaces}}
<section aria-labelledby="s-{{.Name}}">
<h2 id="s-{{.Name}}">{{.Title}} ({{len .Ops}})</h2>
<table>
<thead><tr><th scope="col">Method</th><th scope="col">Path</th><th scope="col">Credentials</th><th scope="col">Query parameters</th><th scope="col">Rate limit</th><th scope="col">Schemas</th></tr></thead>
<tbody>
{{range .Ops}}<tr id="{{.Method}}-{{.Path}}"><td class="m">{{.Method}}</td><td><code>{{.Path}}</code></td>
<td>{{range $i, $c := .Credentials}}{{if $i}}, {{end}}{{$c}}{{end}}{{if .Scopes}}<br><span class="note">scopes: {{range $i, $s := .Scopes}}{{if $i}} {{end}}{{$s}}{{end}}</span>{{end}}</td>
<td>{{range $i, $q := .Query}}{{if $i}}, {{end}}<code>{{$q}}</code>{{end}}</td>
<td>{{.RateLimit}}</td><td>{{if .Platform}}platform{{else}}Aviary{{end}}</td></tr>
{{end}}</tbody>
</table>
</section>
{{end}}
</main>
</body>
</html>
`))

type viewSurface struct {
	Name, Title string
	Ops         []Operation
}

// HTML renders the operations as the page GET /_aviary/docs serves.
func (d *Document) HTML(version, platform string) ([]byte, error) {
	titles := []struct{ name, title string }{{SurfaceCore, "Core API"}, {SurfaceAds, "Advertising API"}, {SurfaceAviary, "Aviary's own endpoints"}}
	var surfaces []viewSurface
	for _, s := range titles {
		vs := viewSurface{Name: s.name, Title: s.title}
		for _, op := range d.Operations {
			if op.Surface == s.name {
				vs.Ops = append(vs.Ops, op)
			}
		}
		if len(vs.Ops) > 0 {
			surfaces = append(surfaces, vs)
		}
	}
	var buf bytes.Buffer
	err := viewPage.Execute(&buf, map[string]any{"Version": version, "Platform": platform, "Surfaces": surfaces})
	if err != nil {
		return nil, fmt.Errorf("selfdoc: render the view: %w", err)
	}
	return buf.Bytes(), nil
}

// HandlerHTML serves page (from HTML).
func HandlerHTML(page []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		_, _ = w.Write(page)
	})
}
