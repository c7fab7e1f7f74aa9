// Package e2e holds Aviary's end-to-end tests: they build the aviary binary
// once, start real api, worker and dev processes against their own
// PostgreSQL database, Redis database and blob store (local directory or a
// MinIO bucket), and drive the HTTP API like a client would, including
// killing and freezing processes to check that nothing accepted is lost.
// The package has no non-test code besides this comment.
package e2e
