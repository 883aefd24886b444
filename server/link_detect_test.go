package server

import "testing"

// The hold on new accounts' links finds every way of writing a link
// (issue 41 item 8): bare domains on any TLD, shorteners, punycode and
// Unicode names, //host, IP addresses, full-width letters and dots; and
// leaves ordinary text alone.
func TestHasLinkFindsEveryLink(t *testing.T) {
	t.Parallel()
	links := []string{
		"see example.com", "visit my-shop.museum today", "cheap pills at pharma.pharmacy", "winner.xyz",
		"bit.ly/3xYz", "t.co/abc", "go to foo.co.uk", "EXAMPLE.ORG", "site.blogspot.com",
		"xn--80ak6aa92e.com", "пример.рф", "例子.中国 now", "//evil.example/path", "(//cdn.host/x)",
		"http://x", "ftp://files", "HTTPS://EXAMPLE.COM", "www.example", "192.168.1.20", "ping 8.8.8.8:53",
		"[2001:db8::1]", "example．com", "example。com", "ｅｘａｍｐｌｅ．ｃｏｍ", "ｗｗｗ．ｓｐａｍ．ｃｏ",
	}
	for _, s := range links {
		if !hasLink(s) {
			t.Errorf("%q: no link found", s)
		}
	}
	plain := []string{
		"hello world", "version 1.2.3 is out", "e.g. this one", "i.e. that", "file.txt attached", "written in node.js",
		"pi is 3.14", "Mr. Smith. Then", "wait...what", "a/b//c", "co.uk", "10.5 points", "",
	}
	for _, s := range plain {
		if hasLink(s) {
			t.Errorf("%q: taken for a link", s)
		}
	}
}
