// Package auth holds sign-in primitives: password hashing and validation.
package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// OWASP's recommended argon2id parameters (19 MiB, 2 passes, 1 lane): the
// cost of a zero PasswordCost. They are written into every hash, so raising
// them later keeps old hashes valid.
const (
	argonMemory  = 19456 // KiB
	argonTime    = 2
	argonThreads = 1
	saltLen      = 16
	keyLen       = 32
)

// Password length limits in characters (runes). The upper bound stops very
// long inputs from being used to burn CPU; nothing is ever truncated.
const (
	MinPasswordLen = 8
	MaxPasswordLen = 128
)

var (
	ErrPasswordTooShort error = PasswordRule(fmt.Sprintf("Password must be at least %d characters", MinPasswordLen))
	ErrPasswordTooLong  error = PasswordRule(fmt.Sprintf("Password must be at most %d characters", MaxPasswordLen))
	ErrInvalidHash            = errors.New("auth: invalid password hash")
)

var b64 = base64.RawStdEncoding

// PasswordCost is what a new hash costs: argon2id's memory in KiB and its
// passes. The zero value is OWASP's recommendation, the production cost.
// Only tests set another (a suite signs in thousands of times; at 19 MiB
// and two passes each costs about 40 ms of CPU): every hash records its
// own cost, so VerifyPassword checks any hash at the cost it was made with.
type PasswordCost struct {
	MemoryKiB uint32
	Passes    uint32
}

// HashPassword returns pw hashed with argon2id at the production cost, in
// PHC string format: $argon2id$v=19$m=19456,t=2,p=1$salt$hash.
func HashPassword(pw string) (string, error) {
	return PasswordCost{}.Hash(pw)
}

// Hash returns pw hashed with argon2id at cost c (the production cost when
// c is zero), in PHC string format.
func (c PasswordCost) Hash(pw string) (string, error) {
	memory, passes := c.MemoryKiB, c.Passes
	if c == (PasswordCost{}) {
		memory, passes = argonMemory, argonTime
	}
	if memory < 8*argonThreads || passes == 0 {
		return "", fmt.Errorf("auth: password cost %d KiB, %d passes is below argon2's minimum", memory, passes)
	}
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("auth: read salt: %w", err)
	}
	key := argon2.IDKey([]byte(pw), salt, passes, memory, argonThreads, keyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, memory, passes, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// VerifyPassword reports whether pw matches encoded. The parameters are read
// from the string so hashes made with other costs still verify. An error
// means the stored hash is malformed, not that the password is wrong.
func VerifyPassword(encoded, pw string) (bool, error) {
	parts := strings.Split(encoded, "$")
	// "", "argon2id", "v=19", "m=..,t=..,p=..", salt, hash
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return false, ErrInvalidHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, ErrInvalidHash
	}
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m == 0 || t == 0 || p == 0 {
		return false, ErrInvalidHash
	}
	// Refuse absurd costs from a tampered row rather than allocate gigabytes.
	if m > 1<<20 || t > 16 {
		return false, ErrInvalidHash
	}
	salt, err := b64.DecodeString(parts[4])
	if err != nil || len(salt) == 0 {
		return false, ErrInvalidHash
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil || len(want) == 0 || len(want) > 1024 {
		return false, ErrInvalidHash
	}
	got := argon2.IDKey([]byte(pw), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// PasswordRule is a length rule a new password breaks; its text is the
// sentence the person is shown, which is why it starts with a capital.
type PasswordRule string

func (r PasswordRule) Error() string { return string(r) }

// ValidatePassword checks the length rules for a new password.
func ValidatePassword(pw string) error {
	n := utf8.RuneCountInString(pw)
	if n < MinPasswordLen {
		return ErrPasswordTooShort
	}
	if n > MaxPasswordLen {
		return ErrPasswordTooLong
	}
	return nil
}
