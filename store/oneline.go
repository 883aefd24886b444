package store

import (
	"strings"
	"unicode"
)

// OneLine reports whether s is fit for a one-line field (a name, a
// subject, a location): no control character (CR, LF, tab, the other C0
// and C1 codes, DEL) and no Unicode line or paragraph separator. Such a
// value goes into mail headers, push titles and page titles as it is.
func OneLine(s string) bool {
	return strings.IndexFunc(s, breaksLine) < 0
}

// TextOnly reports whether s is fit for multi-line text: line breaks and
// tabs are text, the other control characters are not.
func TextOnly(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r != '\n' && r != '\r' && r != '\t' && breaksLine(r) }) < 0
}

func breaksLine(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
}

// MsgOneLine is the field error of a one-line field holding a line break
// or another control character.
func MsgOneLine(label string) string {
	return label + " must be one line, without line breaks or control characters"
}

// CheckOneLine answers the field error of a one-line field that is not.
func CheckOneLine(field, label, value string) error {
	if OneLine(value) {
		return nil
	}
	return &ErrInvalid{Msg: MsgOneLine(label), Field: field}
}
