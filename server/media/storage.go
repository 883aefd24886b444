// Package media stores uploaded files in S3/MinIO or on local disk behind the
// same presigned-URL flow, so the browser code is identical for both.
package media

import (
	"context"
	"errors"
	"io"
	"time"
)

// ErrNotFound is what Open and Stat answer, on every storage, for a key
// that holds no object.
var ErrNotFound = errors.New("media: no such object")

// Storage holds file bytes by object key.
type Storage interface {
	// PresignPut returns a URL the browser PUTs the file to; the upload is
	// refused unless it is exactly size bytes.
	PresignPut(ctx context.Context, key, contentType string, size int64, ttl time.Duration) (string, error)
	// PresignGet returns a URL that serves the file until about ttl from now.
	PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error)
	// Put stores a file of size bytes read from r (seed data, server-side
	// writes, local uploads).
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error
	// Open reads a stored object (ErrNotFound when missing); callers close it.
	Open(ctx context.Context, key string) (io.ReadCloser, int64, error)
	// Stat returns the stored size, or ErrNotFound when the object is missing.
	Stat(ctx context.Context, key string) (int64, error)
	Delete(ctx context.Context, key string) error

	// A multipart upload stores a large file in parts that arrive one by
	// one (and may be sent again), each streamed, then joins them under key
	// in number order; an upload that is given up is aborted and leaves
	// nothing behind. On S3 these are S3's multipart calls, so every part
	// but the last must be at least 5 MiB.
	CreateMultipart(ctx context.Context, key, contentType string) (uploadID string, err error)
	// PutPart stores part number (from 1) of exactly size bytes read from
	// r, replacing an earlier copy; it answers the part's ETag.
	PutPart(ctx context.Context, key, uploadID string, number int, r io.Reader, size int64) (etag string, err error)
	CompleteMultipart(ctx context.Context, key, uploadID string, parts []Part) error
	AbortMultipart(ctx context.Context, key, uploadID string) error
}

// Part is one stored part of a multipart upload.
type Part struct {
	Number int
	ETag   string
}

// Presigner is a storage that serves a private file itself through a
// short-lived signed link (S3): the server then redirects a download there
// instead of streaming the bytes through itself.
type Presigner interface {
	PresignDownload(ctx context.Context, key, filename, contentType string, ttl time.Duration) (string, error)
}

// URLTTL is how long a signed GET URL stays valid. URLs are computed for a
// time window so that cached pages carry identical, cacheable URLs.
const URLTTL = 24 * time.Hour
