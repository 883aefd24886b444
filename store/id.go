package store

import (
	"crypto/rand"
	"encoding/base32"
	"regexp"
	"strings"
)

var idEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// NewID returns an opaque 128-bit random identifier. Ids are not sequential so
// they reveal nothing about how many rows exist and cannot be guessed.
func NewID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return strings.ToLower(idEncoding.EncodeToString(b[:]))
}

var idPattern = regexp.MustCompile(`^[a-z2-7]{26}$`)

// LooksLikeID reports whether s has the shape of NewID's output. App names
// are refused that shape (CheckAppName), so a path segment that looks like an
// id is one.
func LooksLikeID(s string) bool { return idPattern.MatchString(s) }
