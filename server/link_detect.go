package server

import (
	"net"
	"regexp"
	"strings"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
	"golang.org/x/text/unicode/norm"
)

// hasLink reports whether a post holds what a reader could follow as a
// link, for the hold on new accounts' links (issue 41 item 8): a URL with
// any scheme or none ("//host"), a www. address, an IP address, or a bare
// domain whose suffix is on the public suffix list (any TLD, shorteners
// such as bit.ly, internationalised names in Unicode or punycode), also
// written with full-width letters or dots.
func hasLink(s string) bool {
	// Full-width forms (ｅｘａｍｐｌｅ．ｃｏｍ) fold to ASCII; the dots IDNA
	// treats as dots are dots.
	s = dotReplacer.Replace(norm.NFKC.String(s))
	if schemeOrSlashes.MatchString(s) {
		return true
	}
	for _, cand := range hostCandidate.FindAllString(s, -1) {
		if isLinkHost(cand) {
			return true
		}
	}
	return false
}

var (
	dotReplacer = strings.NewReplacer("\u3002", ".", "\uff0e", ".", "\uff61", ".")
	// A scheme (http://, hxxp:// is not one) or a scheme-relative "//host".
	schemeOrSlashes = regexp.MustCompile(`(?i)(\b[a-z][a-z0-9+.-]*://|(^|[\s(<"'])//[^\s/]|\bwww\.[^\s.])`)
	// Dotted names and addresses: labels of letters, digits and hyphens
	// (any script), or a bracketed IPv6 address.
	hostCandidate = regexp.MustCompile(`\[[0-9a-fA-F:.]+\]|[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?(?:\.[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?)+`)
)

// isLinkHost: an IP address, or a domain under a listed public suffix.
func isLinkHost(cand string) bool {
	if strings.HasPrefix(cand, "[") {
		return net.ParseIP(strings.Trim(cand, "[]")) != nil
	}
	if ip := net.ParseIP(cand); ip != nil && ip.To4() != nil {
		return true
	}
	host, err := idna.Lookup.ToASCII(strings.ToLower(cand))
	if err != nil || !strings.Contains(host, ".") {
		return false
	}
	suffix, icann := publicsuffix.PublicSuffix(host)
	if !icann && !strings.Contains(suffix, ".") {
		return false // an unlisted last label (file.txt, node.js): no TLD
	}
	// Something must stand before the suffix: "co.uk" alone is no host.
	return len(host) > len(suffix)+1
}
