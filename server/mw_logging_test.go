package server

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// LOG_FORMAT=json writes one JSON object per line, with the request id of
// the context; LOG_LEVEL filters; a wrong value names its variable.
func TestLoggerSettings(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	env := map[string]string{"LOG_FORMAT": "json", "LOG_LEVEL": "warn"}
	logger, err := NewLogger(&buf, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.WithValue(context.Background(), requestIDKey{}, "req-12345678")
	logger.InfoContext(ctx, "not shown")
	logger.WarnContext(ctx, "shown", "n", 1)
	var line map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(buf.Bytes()), &line); err != nil {
		t.Fatalf("not one JSON line: %q", buf.String())
	}
	if line["msg"] != "shown" || line["request_id"] != "req-12345678" || line["level"] != "WARN" {
		t.Errorf("line: %v", line)
	}
	for k, v := range map[string]string{"LOG_FORMAT": "xml", "LOG_LEVEL": "loud"} {
		_, err := NewLogger(&buf, func(key string) string { return map[string]string{k: v}[key] })
		if err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: %v", k, v, err)
		}
	}
}
