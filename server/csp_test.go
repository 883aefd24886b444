package server

import (
	"strings"
	"testing"
)

func TestContentSecurityPolicy(t *testing.T) {
	base := Config{PublicURL: "http://localhost:3000", AuthURL: "http://localhost:3002"}
	local := contentSecurityPolicy(base)
	if !strings.Contains(local, "script-src 'self';") || !strings.Contains(local, "frame-ancestors 'none'") ||
		!strings.Contains(local, "form-action 'self' http://localhost:3002") {
		t.Fatalf("local policy: %s", local)
	}
	withS3 := base
	withS3.S3 = S3Config{Endpoint: "127.0.0.1:9000", Bucket: "media"}
	policy := contentSecurityPolicy(withS3)
	for _, directive := range []string{"img-src", "media-src", "connect-src"} {
		start := strings.Index(policy, directive)
		end := strings.Index(policy[start:], ";")
		if !strings.Contains(policy[start:start+end], "http://127.0.0.1:9000") {
			t.Errorf("%s must allow the S3 endpoint: %s", directive, policy)
		}
	}
	if strings.Contains(strings.Split(policy, "script-src")[1], "9000") && strings.Index(policy, "9000") < strings.Index(policy, "style-src") {
		t.Error("scripts must never come from the media endpoint")
	}
}
