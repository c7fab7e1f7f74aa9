package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters of new hashes (OWASP's first recommendation: 19 MiB,
// two passes, one lane). Verification reads them from the stored string,
// so they can be raised later without invalidating passwords.
const (
	argonMemory  = 19 * 1024
	argonTime    = 2
	argonThreads = 1
	argonKeyLen  = 32
	saltLen      = 16
)

// MinPasswordLength is the shortest password HashPassword accepts.
const MinPasswordLength = 8

// HashPassword returns password's argon2id hash as a PHC string
// ($argon2id$v=19$m=...,t=...,p=...$salt$key).
func HashPassword(password string) (string, error) {
	if len(password) < MinPasswordLength {
		return "", fmt.Errorf("password too short: at least %d characters", MinPasswordLength)
	}
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("password salt: %w", err)
	}
	key := idKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// dummyHash is checked when the user is unknown or has no password, so a
// login attempt takes as long whether the name exists or not.
var dummyHash = func() string {
	h, err := HashPassword("not a password of anyone")
	if err != nil {
		panic(err)
	}
	return h
}()

// CheckPassword reports whether password matches hash (a PHC string from
// HashPassword). An empty or malformed hash matches nothing, after the same
// work as a real check.
func CheckPassword(hash, password string) bool {
	ok, err := checkPassword(hash, password)
	if err != nil {
		_, _ = checkPassword(dummyHash, password)
		return false
	}
	return ok
}

var errBadHash = errors.New("malformed password hash")

func checkPassword(hash, password string) (bool, error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errBadHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errBadHash
	}
	var memory, passes uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &memory, &passes, &threads); err != nil || memory == 0 || passes == 0 || threads == 0 {
		return false, errBadHash
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false, errBadHash
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false, errBadHash
	}
	got := idKey([]byte(password), salt, passes, memory, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// hashSlots bounds the argon2id computations running at once: each holds
// its memory cost (19 MiB), so logins sent all at once from many
// addresses (each address's throttle admits a few) would otherwise
// allocate without bound. Past the bound they wait their turn; the CPU
// could not run them any sooner.
var hashSlots = make(chan struct{}, runtime.GOMAXPROCS(0)+1)

// idKey is argon2.IDKey run in one of hashSlots.
func idKey(password, salt []byte, passes, memory uint32, threads uint8, keyLen uint32) []byte {
	hashSlots <- struct{}{}
	defer func() { <-hashSlots }()
	return argon2.IDKey(password, salt, passes, memory, threads, keyLen)
}
