// Package web is the HTML tier beside api/: the pages people use in a
// browser (the OAuth consent and login pages, web/oauth, and the developer
// console, web/console). It owns what every page needs and the API does not: templates
// embedded in the binary (html/template: plain, accessible HTML that works
// without JavaScript), sessions in a signed cookie, CSRF tokens bound to the
// session, security headers that refuse framing, a login throttle per user
// and per address in Redis, and password hashing (argon2id).
//
// Feature packages under web/ (web/oauth, web/console) build their handlers
// on a Kit. The console alone loads a script: htmx, vendored and served from
// this origin (HTMX, docs/console.md).
// The tier imports domain/..., ops/..., storage, render and internal/...,
// never api/ features or workers (internal/archtest), so it runs beside the
// API on the same listener (docs/architecture.md, docs/oauth.md).
package web
