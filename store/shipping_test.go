package store

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Issue 43 item 4: a zone's rate is its flat rate, plus the rate per item
// for every physical item after the first, or nothing from its threshold.
func TestShippingRate(t *testing.T) {
	z := ShippingZone{FlatRate: 500, PerItem: 150, FreeOver: 5000}
	for _, c := range []struct {
		qty, subtotal, want int64
	}{
		{0, 1000, 0},   // nothing physical
		{1, 1000, 500}, // one item: the flat rate
		{3, 3000, 800}, // two extra items
		{3, 4999, 800}, // a cent short of free
		{3, 5000, 0},   // at the threshold
		{10, 9000, 0},  // above it
		{2, 1000, 650}, // one extra
		{1, 0, 500},    // a free item still ships
	} {
		if got := z.Rate(c.qty, c.subtotal); got != c.want {
			t.Errorf("Rate(%d, %d) = %d, want %d", c.qty, c.subtotal, got, c.want)
		}
	}
	never := ShippingZone{FlatRate: 700}
	if got := never.Rate(4, 1_000_000); got != 700 {
		t.Errorf("no threshold, no per-item: %d, want 700", got)
	}
}

// The country list is ISO 3166-1 with English names; postal codes are
// checked by country where the validator has a pattern.
func TestCountriesAndPostcodes(t *testing.T) {
	if n := len(Countries); n < 249 {
		t.Fatalf("%d countries, ISO 3166-1 has 249", n)
	}
	for code, name := range map[string]string{"US": "United States", "GB": "United Kingdom", "DE": "Germany", "JP": "Japan", "BR": "Brazil", "CI": "Côte d’Ivoire"} {
		if got := CountryName(code); got != name {
			t.Errorf("CountryName(%s) = %q, want %q", code, got, name)
		}
	}
	if CountryName("UK") != "" || CountryName("EU") != "" || CountryName("ZZ") != "" {
		t.Error("UK, EU and ZZ are no ISO 3166-1 countries")
	}
	if !slices.IsSortedFunc(Countries, func(a, b Country) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("countries are not in the order of their names")
	}
	addr := func(country, zip string) *ShippingAddress {
		return &ShippingAddress{FirstName: "Ada", LastName: "L", Address: "1 Main St", City: "Town", State: "ST", ZipCode: zip, Country: country}
	}
	for _, c := range []struct {
		country, zip string
		ok           bool
	}{
		{"US", "94107", true}, {"US", "94107-1234", true}, {"US", "9410", false}, {"US", "ABCDE", false},
		{"CA", "K1A 0B1", true}, {"CA", "k1a0b1", true}, {"CA", "12345", false},
		{"GB", "SW1A 1AA", true}, {"UK", "sw1a 1aa", true}, {"GB", "12345", false},
		{"DE", "10115", true}, {"DE", "1011", false}, {"NL", "1012 AB", true}, {"JP", "100-0001", true}, {"JP", "1000001", false},
		{"HK", "", true},  // no postal codes in Hong Kong
		{"US", "", false}, // required where they exist
		{"XX", "12345", false},
	} {
		a := addr(c.country, c.zip)
		a.Normalize()
		err := a.Validate()
		if (err == nil) != c.ok {
			t.Errorf("%s %q: %v, want ok=%t", c.country, c.zip, err, c.ok)
		}
	}
	a := addr("uk", " sw1a 1aa ")
	a.Normalize()
	if a.Country != "GB" || a.ZipCode != "SW1A 1AA" {
		t.Errorf("normalized to %s %q", a.Country, a.ZipCode)
	}
	err := addr("CA", "12345").Validate()
	if inv, ok := err.(*ErrInvalid); !ok || inv.Field != "zipCode" || inv.Msg != "12345 is not a postal code of Canada" {
		t.Errorf("refusal: %#v", err)
	}
}

// postcodeCountries are the validator's pattern keys: a validator update
// that adds or drops one fails here instead of silently (un)checking.
func TestPostcodeCountriesMatchTheValidator(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/go-playground/validator/v10").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	src, err := os.ReadFile(strings.TrimSpace(string(out)) + "/postcode_regexes.go")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, m := range regexp.MustCompile(`(?m)^\s*"([A-Z]{2})":`).FindAllStringSubmatch(string(src), -1) {
		keys = append(keys, m[1])
	}
	slices.Sort(keys)
	want := slices.Clone(postcodeCountries)
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Fatalf("validator patterns %v\nlisted %v", keys, want)
	}
}
