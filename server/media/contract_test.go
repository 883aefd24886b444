package media_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"marquee/server/media"
	"marquee/server/media/mediatest"
)

// The media storage's contract, run the same way against local disk and a
// real MinIO (as payment_contract_test.go does for payment providers): what
// the server relies on must not depend on where the files live. The
// interface has no range reads, listing or stored content type (Local
// derives the type from the key when it serves a file), so neither has
// this table.
func TestMediaStorageContract(t *testing.T) {
	backends := []struct {
		name string
		open func(t *testing.T) media.Storage
	}{
		{"local", func(t *testing.T) media.Storage {
			return &media.Local{Dir: t.TempDir(), BaseURL: "http://main.test", Key: []byte("contract-test-key")}
		}},
		{"minio", func(t *testing.T) media.Storage {
			s, _ := mediatest.S3(t)
			return s
		}},
	}
	cases := []struct {
		name string
		run  func(t *testing.T, ctx context.Context, st media.Storage, key string)
	}{
		{"put then stat and open answer the bytes", func(t *testing.T, ctx context.Context, st media.Storage, key string) {
			put(t, ctx, st, key, "first bytes")
			if n, err := st.Stat(ctx, key); err != nil || n != int64(len("first bytes")) {
				t.Errorf("stat = %d, %v; want %d", n, err, len("first bytes"))
			}
			if got := read(t, ctx, st, key); got != "first bytes" {
				t.Errorf("open read %q", got)
			}
		}},
		{"a key with folders", func(t *testing.T, ctx context.Context, st media.Storage, key string) {
			nested := key + "/apps/a1/media/m1.png"
			put(t, ctx, st, nested, "nested")
			if got := read(t, ctx, st, nested); got != "nested" {
				t.Errorf("open read %q", got)
			}
		}},
		{"a missing key is ErrNotFound for stat and open", func(t *testing.T, ctx context.Context, st media.Storage, key string) {
			if _, err := st.Stat(ctx, key); !errors.Is(err, media.ErrNotFound) {
				t.Errorf("stat of a missing key: %v, want ErrNotFound", err)
			}
			rc, _, err := st.Open(ctx, key)
			if err == nil {
				rc.Close()
			}
			if !errors.Is(err, media.ErrNotFound) {
				t.Errorf("open of a missing key: %v, want ErrNotFound", err)
			}
		}},
		{"put again replaces the object", func(t *testing.T, ctx context.Context, st media.Storage, key string) {
			put(t, ctx, st, key, "a longer first version")
			put(t, ctx, st, key, "second")
			if got := read(t, ctx, st, key); got != "second" {
				t.Errorf("after overwrite read %q", got)
			}
			if n, err := st.Stat(ctx, key); err != nil || n != 6 {
				t.Errorf("after overwrite stat = %d, %v", n, err)
			}
		}},
		{"delete removes, and deleting again is no error", func(t *testing.T, ctx context.Context, st media.Storage, key string) {
			put(t, ctx, st, key, "gone soon")
			if err := st.Delete(ctx, key); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Stat(ctx, key); !errors.Is(err, media.ErrNotFound) {
				t.Errorf("stat after delete: %v, want ErrNotFound", err)
			}
			if err := st.Delete(ctx, key); err != nil {
				t.Errorf("second delete: %v", err)
			}
		}},
		{"a body shorter than declared stores nothing", func(t *testing.T, ctx context.Context, st media.Storage, key string) {
			if err := st.Put(ctx, key, strings.NewReader("short"), 50, "text/plain"); err == nil {
				t.Error("put of 5 bytes declared as 50 succeeded")
			}
			if _, err := st.Stat(ctx, key); !errors.Is(err, media.ErrNotFound) {
				t.Errorf("stat after a short put: %v, want ErrNotFound", err)
			}
		}},
		{"a multipart upload joins its parts, a part sent again replaces it", func(t *testing.T, ctx context.Context, st media.Storage, key string) {
			id, err := st.CreateMultipart(ctx, key, "application/octet-stream")
			if err != nil {
				t.Fatal(err)
			}
			// S3 wants every part but the last to be 5 MiB or more.
			first := bytes.Repeat([]byte("a"), 5<<20)
			e1 := putPart(t, ctx, st, key, id, 1, []byte(strings.Repeat("x", 5<<20)))
			e1again := putPart(t, ctx, st, key, id, 1, first)
			e2 := putPart(t, ctx, st, key, id, 2, []byte("tail"))
			if e1 == "" || e2 == "" || e1again == "" {
				t.Fatalf("empty etags %q %q %q", e1, e1again, e2)
			}
			if err := st.CompleteMultipart(ctx, key, id, []media.Part{{Number: 1, ETag: e1again}, {Number: 2, ETag: e2}}); err != nil {
				t.Fatal(err)
			}
			if got := read(t, ctx, st, key); got != string(first)+"tail" {
				t.Errorf("joined object is %d bytes (%q...), want %d of a then tail", len(got), got[:min(len(got), 8)], len(first)+4)
			}
		}},
		{"an aborted multipart upload leaves nothing", func(t *testing.T, ctx context.Context, st media.Storage, key string) {
			id, err := st.CreateMultipart(ctx, key, "application/octet-stream")
			if err != nil {
				t.Fatal(err)
			}
			putPart(t, ctx, st, key, id, 1, []byte("part"))
			if err := st.AbortMultipart(ctx, key, id); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Stat(ctx, key); !errors.Is(err, media.ErrNotFound) {
				t.Errorf("stat after abort: %v, want ErrNotFound", err)
			}
		}},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			st := b.open(t)
			for i, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					c.run(t, context.Background(), st, "contract/case"+string(rune('a'+i)))
				})
			}
		})
	}
}

func put(t *testing.T, ctx context.Context, st media.Storage, key, body string) {
	t.Helper()
	if err := st.Put(ctx, key, strings.NewReader(body), int64(len(body)), "text/plain"); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

func read(t *testing.T, ctx context.Context, st media.Storage, key string) string {
	t.Helper()
	rc, n, err := st.Open(ctx, key)
	if err != nil {
		t.Fatalf("open %s: %v", key, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	if n != int64(len(data)) {
		t.Errorf("open %s answered size %d for %d bytes", key, n, len(data))
	}
	return string(data)
}

func putPart(t *testing.T, ctx context.Context, st media.Storage, key, id string, n int, data []byte) string {
	t.Helper()
	etag, err := st.PutPart(ctx, key, id, n, bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("put part %d: %v", n, err)
	}
	return etag
}
