package auth

import (
	"errors"
	"strings"
	"testing"
)

func TestHashRoundTrip(t *testing.T) {
	h, err := HashPassword("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("unexpected format %q", h)
	}
	ok, err := VerifyPassword(h, "correct horse battery")
	if err != nil || !ok {
		t.Fatalf("verify right password: ok=%v err=%v", ok, err)
	}
	ok, err = VerifyPassword(h, "correct horse batterY")
	if err != nil || ok {
		t.Fatalf("verify wrong password: ok=%v err=%v", ok, err)
	}
}

// A cost other than the production one is written into the hash, verifies
// with nothing else known, and one below argon2's minimum is refused rather
// than quietly raised.
func TestPasswordCostTravelsInTheHash(t *testing.T) {
	h, err := PasswordCost{MemoryKiB: 64, Passes: 1}.Hash("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("cheap hash %q does not record its cost", h)
	}
	if ok, err := VerifyPassword(h, "correct horse battery"); err != nil || !ok {
		t.Fatalf("verify right password: ok=%v err=%v", ok, err)
	}
	if ok, _ := VerifyPassword(h, "correct horse batterY"); ok {
		t.Fatal("a wrong password matched a cheap hash")
	}
	for _, c := range []PasswordCost{{MemoryKiB: 4, Passes: 1}, {MemoryKiB: 64}} {
		if h, err := c.Hash("correct horse battery"); err == nil {
			t.Errorf("cost %+v made %q, want an error", c, h)
		}
	}
}

func TestHashesDiffer(t *testing.T) {
	a, _ := HashPassword("same password")
	b, _ := HashPassword("same password")
	if a == b {
		t.Fatal("two hashes of one password are equal; salt missing")
	}
}

func TestParametersReadFromString(t *testing.T) {
	// A hash made with other costs must still verify.
	h, _ := HashPassword("pw-123456")
	parts := strings.Split(h, "$")
	if ok, err := VerifyPassword(strings.Join(parts, "$"), "pw-123456"); !ok || err != nil {
		t.Fatal("baseline failed")
	}
	parts[3] = "m=8192,t=1,p=1"
	if ok, _ := VerifyPassword(strings.Join(parts, "$"), "pw-123456"); ok {
		t.Fatal("changed parameters still matched: parameters not read from the string")
	}
}

func TestTamperedHash(t *testing.T) {
	h, _ := HashPassword("tamper-me-please")
	parts := strings.Split(h, "$")
	key := []byte(parts[5])
	if key[0] == 'A' {
		key[0] = 'B'
	} else {
		key[0] = 'A'
	}
	parts[5] = string(key)
	if ok, _ := VerifyPassword(strings.Join(parts, "$"), "tamper-me-please"); ok {
		t.Fatal("tampered hash verified")
	}
	for _, bad := range []string{"", "plain", "$argon2i$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA",
		"$argon2id$v=18$m=19456,t=2,p=1$c2FsdA$aGFzaA", "$argon2id$v=19$m=x$c2FsdA$aGFzaA",
		"$argon2id$v=19$m=19456,t=2,p=1$!!$aGFzaA", "$argon2id$v=19$m=99999999,t=2,p=1$c2FsdA$aGFzaA"} {
		if ok, err := VerifyPassword(bad, "x"); ok || !errors.Is(err, ErrInvalidHash) {
			t.Errorf("VerifyPassword(%q) = %v, %v; want false, ErrInvalidHash", bad, ok, err)
		}
	}
}

func TestValidatePassword(t *testing.T) {
	cases := []struct {
		pw   string
		want error
	}{
		{"", ErrPasswordTooShort},
		{"1234567", ErrPasswordTooShort},
		{"12345678", nil},
		{"ééééééé", ErrPasswordTooShort}, // 7 runes, 14 bytes: counted in characters
		{"éééééééé", nil},
		{strings.Repeat("a", 128), nil},
		{strings.Repeat("ü", 128), nil}, // 256 bytes but 128 characters
		{strings.Repeat("a", 129), ErrPasswordTooLong},
	}
	for _, c := range cases {
		if got := ValidatePassword(c.pw); !errors.Is(got, c.want) {
			t.Errorf("ValidatePassword(%d runes) = %v, want %v", len([]rune(c.pw)), got, c.want)
		}
	}
	// Nothing is truncated: a long password differs from its prefix.
	long := strings.Repeat("a", 128)
	h, _ := HashPassword(long)
	if ok, _ := VerifyPassword(h, long[:127]); ok {
		t.Fatal("prefix of password verified")
	}
}
