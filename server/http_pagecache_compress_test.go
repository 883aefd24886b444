package server

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
)

// pageLike is n bytes of HTML shaped like a feed: repeated cards with
// different words in them.
func pageLike(n int) []byte {
	var b bytes.Buffer
	b.WriteString("<!doctype html><html><body><main class=\"page\">")
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `<article class="card post"><h2>Post %d about tour date %d</h2><p>Thanks to %d fans in city %d for the night.</p><button class="like" aria-label="Like">%d</button></article>`, i, i*7%31, i*13, i%17, i*3)
	}
	b.WriteString("</main></body></html>")
	return b.Bytes()
}

// TestPageBrotliWindow: pages are compressed with a 64 KiB window, and a
// page longer than the window still comes back whole and smaller than its
// gzip.
func TestPageBrotliWindow(t *testing.T) {
	t.Parallel()
	for _, n := range []int{30 << 10, 64 << 10, 300 << 10} {
		page := pageLike(n)
		brotliBytes(pageLike(n/2), brotliPageWindow) // a pooled writer used before
		br := brotliBytes(page, brotliPageWindow)
		back, err := io.ReadAll(brotli.NewReader(bytes.NewReader(br)))
		if err != nil || !bytes.Equal(back, page) {
			t.Fatalf("%d bytes: brotli round trip failed (%v)", len(page), err)
		}
		if gz := gzipBytes(page, gzip.BestCompression); len(br) >= len(gz) {
			t.Errorf("%d bytes: brotli %d not smaller than gzip %d", len(page), len(br), len(gz))
		}
	}
}

// BenchmarkPageCompression: what compressing a rendered page costs at
// each render (B/op is the brotli window's hash table).
func BenchmarkPageCompression(b *testing.B) {
	page := pageLike(64 << 10)
	for _, c := range []struct {
		name   string
		window int
	}{{"brotli-64KiB-window", brotliPageWindow}, {"brotli-default-window", 0}} {
		b.Run(c.name, func(b *testing.B) {
			brotliBytes(page, c.window) // a writer in the pool, as after the first page
			b.ReportAllocs()
			n := 0
			for i := 0; i < b.N; i++ {
				n = len(brotliBytes(page, c.window))
			}
			b.ReportMetric(float64(n), "bytes")
		})
	}
	b.Run("gzip-9", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			gzipBytes(page, gzip.BestCompression)
		}
	})
}
