package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/riverqueue/river"

	"marquee/server/outbound"
	"marquee/store"
)

// FetchLinkIconArgs: a landing page links a domain whose favicon we do not
// have yet. The server fetches it once, so visitors load it from our origin
// instead of asking a third-party favicon service on every view.
type FetchLinkIconArgs struct {
	Domain string `json:"domain"`
}

func (FetchLinkIconArgs) Kind() string { return "fetch_link_icon" }

// maxLinkIcon bounds what is read of an icon: favicons are a few KB.
const maxLinkIcon = 100 << 10

type FetchLinkIconWorker struct {
	river.WorkerDefaults[FetchLinkIconArgs]
	Store  *store.Storage
	Logger *slog.Logger
	// Client fetches the icon; nil is outbound.Client (public addresses only).
	Client *http.Client
	// URLFor is where a domain's icon is asked for; nil is
	// https://{domain}/favicon.ico. Tests point it at a local server.
	URLFor func(domain string) string
}

// Timeout bounds one attempt; river retries a failed one with backoff.
func (w *FetchLinkIconWorker) Timeout(*river.Job[FetchLinkIconArgs]) time.Duration {
	return 30 * time.Second
}

func (w *FetchLinkIconWorker) Work(ctx context.Context, job *river.Job[FetchLinkIconArgs]) error {
	domain := job.Args.Domain
	client, urlFor := w.Client, w.URLFor
	if client == nil {
		client = outbound.Client(20 * time.Second)
	}
	if urlFor == nil {
		urlFor = func(d string) string { return "https://" + d + "/favicon.ico" }
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, urlFor(domain), nil)
	if err != nil {
		return w.Store.SaveLinkIcon(ctx, domain, store.LinkIconMissing, "", nil)
	}
	req.Header.Set("User-Agent", "Marquee link icons")
	res, err := client.Do(req)
	if errors.Is(err, outbound.ErrNotPublic) {
		return w.Store.SaveLinkIcon(ctx, domain, store.LinkIconMissing, "", nil)
	}
	if err != nil {
		return fmt.Errorf("fetch icon of %s: %w", domain, err) // retried
	}
	defer res.Body.Close()
	if res.StatusCode >= 500 {
		return fmt.Errorf("fetch icon of %s: status %d", domain, res.StatusCode) // retried
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxLinkIcon+1))
	if err != nil {
		return fmt.Errorf("read icon of %s: %w", domain, err)
	}
	typ := iconType(body)
	if res.StatusCode != http.StatusOK || len(body) == 0 || len(body) > maxLinkIcon || typ == "" {
		// The site answered and has no usable icon: a final answer.
		w.Logger.Info("no link icon", "domain", domain, "status", res.StatusCode, "bytes", len(body))
		return w.Store.SaveLinkIcon(ctx, domain, store.LinkIconMissing, "", nil)
	}
	return w.Store.SaveLinkIcon(ctx, domain, store.LinkIconOK, typ, body)
}

// iconType is the image type of body by its bytes, never by what the site
// claims, or "" when it is not an image we serve (SVG is refused: it may
// carry script, and we serve it from our origin).
func iconType(body []byte) string {
	if len(body) >= 4 && body[0] == 0 && body[1] == 0 && body[2] == 1 && body[3] == 0 {
		return "image/x-icon"
	}
	switch t := http.DetectContentType(body); t {
	case "image/png", "image/gif", "image/jpeg", "image/webp", "image/x-icon", "image/vnd.microsoft.icon":
		return t
	}
	return ""
}
