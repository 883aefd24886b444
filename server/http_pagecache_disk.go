package server

import (
	"bytes"
	"container/list"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"marquee/store"
)

// diskPages is the page cache's second tier when there is no Redis (the
// embedded configuration): a page the memory evicts while still current is
// written to a file, and the next request for it reads the file back
// instead of rendering the page again. With many apps the pages visitors
// read outgrow PAGE_CACHE_MB; a render costs tens of milliseconds of CPU, a
// read of a few KB from the page cache of the kernel a few microseconds.
// Bounded by PAGE_CACHE_DISK_MB, the oldest file going first. The files are
// the process's own (a directory made at the first spill, removed by
// close): a restart starts empty, as the memory does.
type diskPages struct {
	parent string
	limit  int64
	logger *slog.Logger

	mu    sync.Mutex
	dir   string // made at the first store
	bytes int64
	files map[string]*list.Element // page key -> element of order
	order list.List                // of *diskFile, oldest first
}

type diskFile struct {
	key, path string
	size      int64
}

func newDiskPages(parent string, limitMB int, logger *slog.Logger) *diskPages {
	if limitMB <= 0 {
		return nil
	}
	return &diskPages{parent: parent, limit: int64(limitMB) << 20, logger: logger, files: map[string]*list.Element{}}
}

// store writes p under key, replacing an older file of the key and
// removing the oldest files past the limit. A failure only costs renders.
func (d *diskPages) store(key string, p *cachedPage) {
	var buf bytes.Buffer
	err := gob.NewEncoder(&buf).Encode(&store.SharedPage{Status: p.status, Header: p.header, ETag: p.etag,
		Length: p.identityLen, Gzip: p.gz, Brotli: p.br, Engagement: p.engagement, Rendered: p.rendered, Expires: p.expires})
	if err != nil {
		d.logger.Warn("page cache: encoding a page for disk failed", "err", err)
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dir == "" {
		if d.dir, err = os.MkdirTemp(d.parent, "marquee-pages-"); err != nil {
			d.dir = ""
			d.logger.Warn("page cache: no directory for pages on disk", "err", err)
			return
		}
	}
	d.removeLocked(key)
	sum := sha256.Sum256([]byte(key))
	path := filepath.Join(d.dir, hex.EncodeToString(sum[:16]))
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		d.logger.Warn("page cache: writing a page to disk failed", "err", err)
		return
	}
	f := &diskFile{key: key, path: path, size: int64(buf.Len())}
	d.files[key] = d.order.PushBack(f)
	d.bytes += f.size
	for d.bytes > d.limit && d.order.Len() > 0 {
		d.removeLocked(d.order.Front().Value.(*diskFile).key)
	}
}

// load answers the page filed under key, nil when there is none.
func (d *diskPages) load(key string) *cachedPage {
	d.mu.Lock()
	el := d.files[key]
	d.mu.Unlock()
	if el == nil {
		return nil
	}
	b, err := os.ReadFile(el.Value.(*diskFile).path)
	if err != nil {
		return nil // removed meanwhile
	}
	var sp store.SharedPage
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&sp); err != nil {
		d.logger.Warn("page cache: a page on disk does not decode", "err", fmt.Errorf("%s: %w", el.Value.(*diskFile).path, err))
		return nil
	}
	return sharedToCached(&sp)
}

func (d *diskPages) removeLocked(key string) {
	el := d.files[key]
	if el == nil {
		return
	}
	f := el.Value.(*diskFile)
	d.order.Remove(el)
	delete(d.files, key)
	d.bytes -= f.size
	_ = os.Remove(f.path)
}

// purge removes every file (the database was replaced).
func (d *diskPages) purge() {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for key := range d.files {
		d.removeLocked(key)
	}
}

// size is the bytes the files hold.
func (d *diskPages) size() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.bytes
}

// close removes the files and their directory.
func (d *diskPages) close() {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dir != "" {
		_ = os.RemoveAll(d.dir)
	}
	d.dir, d.bytes = "", 0
	clear(d.files)
	d.order.Init()
}

// fromDisk answers the page of key from the disk tier when it will do: at
// the current engagement or (unless fresh) rendered within the staleness
// bound, and not expired. It goes back into memory.
func (pc *pageCache) fromDisk(key string, engagement int64, fresh bool) *cachedPage {
	if pc.disk == nil {
		return nil
	}
	p := pc.disk.load(key)
	now := time.Now()
	if p == nil || p.expired(now) || p.engagement < engagement && (fresh || now.Sub(p.rendered) >= pc.staleFor) {
		return nil
	}
	pc.put(key, p)
	return p
}
