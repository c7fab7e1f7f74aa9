// Package storage defines Aviary's records, one file per domain: the record
// types, their typed statuses, and the blob key layout and URL lifetimes that
// the API tier and the workers share. Implementations live in subpackages
// (storage/postgres for records, storage/blob for objects); this package
// knows no driver, and every driver translates its own errors into the
// sentinels below.
package storage

import "errors"

// Sentinel errors every implementation translates its own errors into.
var (
	// ErrNotFound means the record does not exist or is not visible to the caller.
	ErrNotFound = errors.New("storage: not found")
	// ErrConflict means the write would violate a uniqueness or state rule.
	ErrConflict = errors.New("storage: conflict")
	// ErrUnavailable means the backing service could not be reached or did
	// not answer in time (refused or broken connection, timeout); the call
	// may succeed if retried later. The API answers 503 with Retry-After.
	ErrUnavailable = errors.New("storage: unavailable")
)
