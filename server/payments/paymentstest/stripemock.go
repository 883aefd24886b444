package paymentstest

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"marquee/server/testproc"
)

// StartStripeMock runs stripe-mock (Stripe's own API double, which checks
// every request against Stripe's OpenAPI spec but keeps no state) on a free
// port for the test and answers its base URL. A missing binary fails the
// test: `go install github.com/stripe/stripe-mock@latest` (scripts/services.sh
// does it).
func StartStripeMock(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("stripe-mock")
	if err != nil {
		home, _ := os.UserHomeDir()
		bin = filepath.Join(home, "go", "bin", "stripe-mock")
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("stripe-mock binary not found on PATH or in ~/go/bin (go install github.com/stripe/stripe-mock@latest)")
		}
	}
	addr := testproc.Start(t, "stripe-mock",
		func(addr string) *exec.Cmd { return exec.Command(bin, "-http-addr", addr) },
		func(addr string) bool {
			req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/v1/balance", nil)
			req.Header.Set("Authorization", "Bearer sk_test_123")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				return false
			}
			res.Body.Close()
			return res.StatusCode == http.StatusOK
		})
	return "http://" + addr
}
