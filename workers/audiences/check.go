package audiences

import (
	"crypto/sha256"
	"fmt"

	"github.com/aviary-dev/aviary/storage"
)

// placeholderValues are values whose digest betrays a partner that hashed
// a blank or placeholder field instead of leaving the identifier out, or
// hashed it without normalizing (surrounding spaces).
var placeholderValues = []string{"", " ", "  ", "\t", "\n", "null", "NULL", "Null", "nil", "none", "None", "NONE",
	"undefined", "n/a", "N/A", "na", "NA", "unknown", "0", "-", "@", "\"\"", "[]", "{}", "none@none.com", "test@test.com"}

// CheckContent is the worker's hashing check of a batch's content: no
// digest may be the SHA-256 of an empty or whitespace value or of a known
// placeholder (placeholderValues). partner_user_id values are exempt (the
// API hashed them itself). The first offending identifier is named by
// operation, identifier type and position.
func CheckContent(ops []storage.AudienceOperation) error {
	for i, op := range ops {
		for k, key := range op.Keys {
			if key[0] == storage.IdentPartnerUserID {
				continue
			}
			if v, bad := placeholderDigest(key); bad {
				return fmt.Errorf("operations[%d]: identifier %d (%s) is the SHA-256 of %q, a blank or placeholder value",
					i, k, identName(key[0]), v)
			}
		}
	}
	return nil
}

// placeholderDigests maps the digest of each placeholder value to it (a
// constant table, computed once).
var placeholderDigests = digestsOf(placeholderValues)

func digestsOf(values []string) map[[32]byte]string {
	out := make(map[[32]byte]string, len(values))
	for _, v := range values {
		out[sha256.Sum256([]byte(v))] = v
	}
	return out
}

// placeholderDigest reports whether key's digest is one of a placeholder.
func placeholderDigest(key storage.MemberKey) (string, bool) {
	v, ok := placeholderDigests[[32]byte(key[1:])]
	return v, ok
}

// identName is the user object field of an identifier type.
func identName(kind byte) string {
	for name, k := range storage.AudienceIdentifiers {
		if k == kind {
			return name
		}
	}
	return fmt.Sprintf("type %d", kind)
}
