package media

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

type S3Options struct {
	Endpoint, AccessKey, SecretKey, Bucket, Region string
	UseSSL                                         bool
}

// S3 stores files in an S3-compatible bucket (MinIO in tests).
type S3 struct {
	client *minio.Client
	bucket string
	now    func() time.Time
}

// NewS3 connects and creates the bucket when it is missing.
func NewS3(ctx context.Context, o S3Options) (*S3, error) {
	client, err := minio.New(o.Endpoint, &minio.Options{
		Creds: credentials.NewStaticV4(o.AccessKey, o.SecretKey, ""), Secure: o.UseSSL, Region: o.Region,
	})
	if err != nil {
		return nil, fmt.Errorf("s3 client: %w", err)
	}
	exists, err := client.BucketExists(ctx, o.Bucket)
	if err != nil {
		return nil, fmt.Errorf("s3 bucket %s: %w", o.Bucket, err)
	}
	if !exists {
		if err := client.MakeBucket(ctx, o.Bucket, minio.MakeBucketOptions{Region: o.Region}); err != nil {
			return nil, fmt.Errorf("s3 create bucket %s: %w", o.Bucket, err)
		}
	}
	return &S3{client: client, bucket: o.Bucket, now: time.Now}, nil
}

// PresignPut signs the Content-Length too, so S3 refuses a PUT of any other
// size (a plain presigned PUT accepts whatever the client sends, up to 5 GB).
// Browsers set Content-Length from the file, so the SPEC.md flow is unchanged.
func (s *S3) PresignPut(ctx context.Context, key, _ string, size int64, ttl time.Duration) (string, error) {
	signed := http.Header{"Content-Length": {strconv.FormatInt(size, 10)}}
	u, err := s.client.PresignHeader(ctx, http.MethodPut, s.bucket, key, ttl, nil, signed)
	if err != nil {
		return "", fmt.Errorf("s3 presign put %s: %w", key, err)
	}
	return u.String(), nil
}

// PresignGet asks S3 to answer with a safe content type, so a stored file can
// never be served as HTML.
func (s *S3) PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error) {
	params := url.Values{}
	ct, inline := SafeContentType(key)
	params.Set("response-content-type", ct)
	if !inline {
		params.Set("response-content-disposition", "attachment")
	}
	u, err := s.client.PresignHeader(ctx, "GET", s.bucket, key, ttl, params, nil)
	if err != nil {
		return "", fmt.Errorf("s3 presign get %s: %w", key, err)
	}
	return u.String(), nil
}

func (s *S3) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error {
	if _, err := s.client.PutObject(ctx, s.bucket, key, r, size, minio.PutObjectOptions{ContentType: contentType}); err != nil {
		return fmt.Errorf("s3 put %s: %w", key, err)
	}
	return nil
}

func (s *S3) Open(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	obj, err := s.client.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, 0, fmt.Errorf("s3 get %s: %w", key, err)
	}
	st, err := obj.Stat()
	if err != nil {
		obj.Close()
		return nil, 0, fmt.Errorf("s3 stat %s: %w", key, s3NotFound(err))
	}
	return obj, st.Size, nil
}

func (s *S3) Stat(ctx context.Context, key string) (int64, error) {
	st, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return 0, fmt.Errorf("s3 stat %s: %w", key, s3NotFound(err))
	}
	return st.Size, nil
}

// s3NotFound marks S3's answer for a missing key as ErrNotFound.
func s3NotFound(err error) error {
	if minio.ToErrorResponse(err).Code == "NoSuchKey" {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return err
}

func (s *S3) Delete(ctx context.Context, key string) error {
	if err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil {
		return fmt.Errorf("s3 delete %s: %w", key, err)
	}
	return nil
}

// Ready reports whether the object store answers and the bucket exists
// (GET /readyz).
func (s *S3) Ready(ctx context.Context) error {
	ok, err := s.client.BucketExists(ctx, s.bucket)
	if err != nil {
		return fmt.Errorf("object store: %w", err)
	}
	if !ok {
		return fmt.Errorf("object store: bucket %s is missing", s.bucket)
	}
	return nil
}

func (s *S3) core() minio.Core { return minio.Core{Client: s.client} }

func (s *S3) CreateMultipart(ctx context.Context, key, contentType string) (string, error) {
	id, err := s.core().NewMultipartUpload(ctx, s.bucket, key, minio.PutObjectOptions{ContentType: contentType})
	if err != nil {
		return "", fmt.Errorf("s3 create multipart %s: %w", key, err)
	}
	return id, nil
}

// PutPart streams the part to S3 with its exact size: a body that ends
// early fails, and one that is longer is refused before anything is sent.
func (s *S3) PutPart(ctx context.Context, key, uploadID string, number int, r io.Reader, size int64) (string, error) {
	p, err := s.core().PutObjectPart(ctx, s.bucket, key, uploadID, number, exactly(r, size), size, minio.PutObjectPartOptions{})
	if err != nil {
		return "", fmt.Errorf("s3 put part %d of %s: %w", number, key, err)
	}
	return p.ETag, nil
}

func (s *S3) CompleteMultipart(ctx context.Context, key, uploadID string, parts []Part) error {
	cp := make([]minio.CompletePart, len(parts))
	for i, p := range parts {
		cp[i] = minio.CompletePart{PartNumber: p.Number, ETag: p.ETag}
	}
	if _, err := s.core().CompleteMultipartUpload(ctx, s.bucket, key, uploadID, cp, minio.PutObjectOptions{}); err != nil {
		return fmt.Errorf("s3 complete multipart %s: %w", key, err)
	}
	return nil
}

func (s *S3) AbortMultipart(ctx context.Context, key, uploadID string) error {
	if err := s.core().AbortMultipartUpload(ctx, s.bucket, key, uploadID); err != nil {
		return fmt.Errorf("s3 abort multipart %s: %w", key, err)
	}
	return nil
}

// PresignDownload is a GET link to a private file that S3 answers as an
// attachment named filename, until ttl from now.
func (s *S3) PresignDownload(ctx context.Context, key, filename, contentType string, ttl time.Duration) (string, error) {
	params := url.Values{}
	params.Set("response-content-type", contentType)
	params.Set("response-content-disposition", mime.FormatMediaType("attachment", map[string]string{"filename": filename}))
	params.Set("response-cache-control", "private, no-store")
	u, err := s.client.PresignHeader(ctx, http.MethodGet, s.bucket, key, ttl, params, nil)
	if err != nil {
		return "", fmt.Errorf("s3 presign download %s: %w", key, err)
	}
	return u.String(), nil
}
