package server

import (
	"strings"
	"testing"
)

// directive returns the sources of one CSP directive.
func directive(policy, name string) string {
	for _, d := range strings.Split(policy, ";") {
		if d = strings.TrimSpace(d); strings.HasPrefix(d, name+" ") {
			return d
		}
	}
	return ""
}

func TestContentSecurityPolicy(t *testing.T) {
	base := Config{PublicURL: "http://localhost:3000", AuthURL: "http://localhost:3002"}
	local := contentSecurityPolicy(base)
	if directive(local, "script-src") != "script-src 'self'" || directive(local, "frame-ancestors") != "frame-ancestors 'none'" ||
		!strings.Contains(directive(local, "form-action"), "http://localhost:3002") {
		t.Fatalf("local policy: %s", local)
	}
	withS3 := base
	withS3.S3 = S3Config{Endpoint: "127.0.0.1:9000", Bucket: "media"}
	policy := contentSecurityPolicy(withS3)
	for _, name := range []string{"img-src", "media-src", "connect-src"} {
		if !strings.Contains(directive(policy, name), "http://127.0.0.1:9000") {
			t.Errorf("%s must allow the S3 endpoint: %s", name, policy)
		}
	}
	if directive(policy, "script-src") != "script-src 'self'" {
		t.Errorf("scripts must come from this site only: %s", policy)
	}
}
