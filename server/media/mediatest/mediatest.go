// Package mediatest starts the object store that media tests run against:
// a real MinIO on a port of its own.
package mediatest

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"marquee/server/media"
	"marquee/server/testproc"
)

// MinIO runs a MinIO server for the test and answers the options that
// reach it; it stops when the test ends. A missing binary fails the test:
// the S3 path must be exercised, not skipped.
func MinIO(t testing.TB) media.S3Options {
	t.Helper()
	bin, err := exec.LookPath("minio")
	if err != nil {
		home, _ := os.UserHomeDir()
		bin = filepath.Join(home, "go", "bin", "minio")
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("minio binary not found on PATH or in ~/go/bin (go install github.com/minio/minio@latest)")
		}
	}
	addr := testproc.Start(t, "minio",
		func(addr string) *exec.Cmd {
			cmd := exec.Command(bin, "server", "--quiet", "--address", addr, "--console-address", "127.0.0.1:0", t.TempDir())
			cmd.Env = append(os.Environ(), "MINIO_ROOT_USER=marquee-test", "MINIO_ROOT_PASSWORD=marquee-test-secret", "MINIO_BROWSER=off")
			return cmd
		},
		func(addr string) bool {
			res, err := http.Get("http://" + addr + "/minio/health/live")
			if err != nil {
				return false
			}
			res.Body.Close()
			return res.StatusCode == http.StatusOK
		})
	return media.S3Options{Endpoint: addr, AccessKey: "marquee-test", SecretKey: "marquee-test-secret", Bucket: "marquee-test", Region: "us-east-1"}
}

// S3 is a media.S3 on a MinIO of the test's own, its bucket created.
func S3(t testing.TB) (*media.S3, media.S3Options) {
	t.Helper()
	opts := MinIO(t)
	files, err := media.NewS3(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return files, opts
}
