package store

import (
	"crypto/rand"
	"encoding/base32"
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
