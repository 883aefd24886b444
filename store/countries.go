package store

import (
	"sort"
	"strings"

	"github.com/go-playground/validator/v10"
	"golang.org/x/text/language"
	"golang.org/x/text/language/display"
)

// Country is one country a buyer may ship to: its ISO 3166-1 alpha-2 code
// and English name.
type Country struct {
	Code string `json:"code"`
	Name string `json:"name"`
}

// Countries is the full ISO 3166-1 alpha-2 list, by name: the codes are
// those go-playground/validator knows (its iso3166_1_alpha2 rule, kept to
// the standard), the names CLDR's English ones from golang.org/x/text.
var Countries = allCountries()

// postal is the validator the postal code check uses.
var postal = validator.New()

var countryNames = map[string]string{}

func allCountries() []Country {
	var out []Country
	names := display.English.Regions()
	for a := 'A'; a <= 'Z'; a++ {
		for b := 'A'; b <= 'Z'; b++ {
			code := string([]rune{a, b})
			if postal.Var(code, "iso3166_1_alpha2") != nil {
				continue
			}
			name := code
			if r, err := language.ParseRegion(code); err == nil {
				if n := names.Name(r); n != "" {
					name = n
				}
			}
			countryNames[code] = name
			out = append(out, Country{Code: code, Name: name})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// CountryName answers the English name of an ISO code ("" when it is none).
func CountryName(code string) string { return countryNames[strings.ToUpper(code)] }

// postcodeCountries are the countries whose postal codes the validator
// checks (the keys of its postcode_iso3166_alpha2 patterns, v10.30;
// TestPostcodeCountriesMatchTheValidator compares them with the module's
// source). Elsewhere the postal code is optional and only its length is
// checked: many of those countries use none.
var postcodeCountries = strings.Fields(`AD AL AM AR AS AT AU AX AZ BA BB BD BE BG BH BM BN BR BY CA CC CH CK CL CN CO CR
	CS CV CX CY CZ DE DK DO DZ EC EE EG ES ET FI FK FM FO FR GB GE GF GG GI GL GN GP GR GS GT GU GW HM HN HR HT HU ID IE IL
	IM IN IO IQ IS IT JE JO JP KE KG KH KR KW KZ LA LB LI LK LR LS LT LU LV MA MC MD ME MG MH MK MN MP MQ MT MU MV MX MY NC
	NE NF NG NI NL NO NP NZ OM PF PG PH PK PL PM PN PR PT PW PY RE RO RS RU SA SE SG SH SI SJ SK SM SN SO SZ TC TH TJ TM TN
	TR TW UA US UY UZ VA VE VG VI VN WF XK YT YU ZA ZM`)

// HasPostcodes reports whether the country's postal codes are checked.
func HasPostcodes(country string) bool {
	for _, c := range postcodeCountries {
		if c == country {
			return true
		}
	}
	return false
}

// ValidPostcode checks a postal code against its country's pattern (upper
// case, as the patterns are written); true where none is known.
func ValidPostcode(country, code string) bool {
	if !HasPostcodes(country) {
		return true
	}
	return postal.Var(strings.ToUpper(code), "postcode_iso3166_alpha2="+country) == nil
}
