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
	"slices"
	"strings"
	"sync"
	"time"

	"marquee/store"
)

// diskPages is the page cache's second tier when there is no Redis (the
// embedded configuration): a page the memory evicts while still current,
// and a page rendered when its app was written (page_prerender.go), is written
// to a file, and the next request for it reads the file back instead of
// rendering the page again. With many apps the pages visitors read outgrow
// PAGE_CACHE_MB; a render costs tens of milliseconds of CPU, a read of a
// few KB from the page cache of the kernel a few microseconds. Bounded by
// PAGE_CACHE_DISK_MB, the oldest file going first.
//
// With a SQLite file database the files live beside it (kept) and outlast
// a restart, as the data they were rendered from does: a file is named by
// its page's key, which holds the app's content version and the build, so
// a file of another version or binary is never read as current, and the
// directory by the database's namespace, so neither is one of a database
// since restored.
// Otherwise (PostgreSQL without Redis, a database in memory) they are the
// process's own, in a directory made under parent at the first spill and
// removed by close.
type diskPages struct {
	parent string
	kept   string
	limit  int64
	logger *slog.Logger

	mu    sync.Mutex
	dir   string // made (or read) at first use
	bytes int64
	files map[string]*list.Element // file name -> element of order
	order list.List                // of *diskFile, oldest first
}

type diskFile struct {
	name string
	size int64
}

func newDiskPages(parent, kept string, limitMB int, logger *slog.Logger) *diskPages {
	if limitMB <= 0 {
		return nil
	}
	return &diskPages{parent: parent, kept: kept, limit: int64(limitMB) << 20, logger: logger, files: map[string]*list.Element{}}
}

// keptPagesDir is where the pages of a SQLite file database are kept:
// beside it, in a directory of the database's namespace (a restored
// database has another: store/namespace.go); "" for any other database.
func keptPagesDir(databaseURL, namespace string) string {
	path, ok := store.SQLiteFile(databaseURL)
	if !ok || namespace == "" || strings.ContainsAny(namespace, `/\.`) {
		return ""
	}
	return filepath.Join(path+"-pages", namespace)
}

// pageFileName names the file of a page key.
func pageFileName(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:16])
}

// openLocked makes the directory at first use; a kept one's files, from
// before a restart or another process (bench-data), are listed oldest
// first.
func (d *diskPages) openLocked() bool {
	if d.dir != "" {
		return true
	}
	if d.kept == "" {
		dir, err := os.MkdirTemp(d.parent, "marquee-pages-")
		if err != nil {
			d.logger.Warn("page cache: no directory for pages on disk", "err", err)
			return false
		}
		d.dir = dir
		return true
	}
	if err := os.MkdirAll(d.kept, 0o700); err != nil {
		d.logger.Warn("page cache: no directory for pages on disk", "err", err)
		return false
	}
	d.dir = d.kept
	// The pages of the database's earlier namespaces (before a restore)
	// are never read again.
	parent, own := filepath.Split(d.kept)
	if others, err := os.ReadDir(parent); err == nil {
		for _, e := range others {
			if e.IsDir() && e.Name() != own {
				_ = os.RemoveAll(filepath.Join(parent, e.Name()))
			}
		}
	}
	entries, err := os.ReadDir(d.dir)
	if err != nil {
		d.logger.Warn("page cache: pages on disk unreadable", "err", err)
		return true
	}
	type found struct {
		diskFile
		mod time.Time
	}
	var files []found
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		if strings.HasPrefix(e.Name(), ".") { // a write a crash interrupted
			_ = os.Remove(filepath.Join(d.dir, e.Name()))
			continue
		}
		files = append(files, found{diskFile{name: e.Name(), size: info.Size()}, info.ModTime()})
	}
	slices.SortFunc(files, func(a, b found) int { return a.mod.Compare(b.mod) })
	for _, f := range files {
		d.indexLocked(&diskFile{name: f.name, size: f.size})
	}
	d.trimLocked()
	return true
}

// store writes p under key, replacing an older file of the key and
// removing the oldest files past the limit. A failure only costs renders.
func (d *diskPages) store(key string, p *cachedPage) {
	var buf bytes.Buffer
	err := gob.NewEncoder(&buf).Encode(sharedOf(p))
	if err != nil {
		d.logger.Warn("page cache: encoding a page for disk failed", "err", err)
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.openLocked() {
		return
	}
	name := pageFileName(key)
	d.removeLocked(name)
	// Written aside and renamed: a reader (another process) sees the old
	// file or the new one, never half of one.
	tmp, err := os.CreateTemp(d.dir, ".page-")
	if err == nil {
		_, err = tmp.Write(buf.Bytes())
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), filepath.Join(d.dir, name))
		}
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}
	if err != nil {
		d.logger.Warn("page cache: writing a page to disk failed", "err", err)
		return
	}
	d.indexLocked(&diskFile{name: name, size: int64(buf.Len())})
	d.trimLocked()
}

// load answers the page filed under key, nil when there is none.
func (d *diskPages) load(key string) *cachedPage {
	name := pageFileName(key)
	d.mu.Lock()
	if d.kept != "" && !d.openLocked() {
		d.mu.Unlock()
		return nil
	}
	_, known := d.files[name]
	dir := d.dir
	d.mu.Unlock()
	if !known && d.kept == "" {
		return nil // only this process writes a temporary directory
	}
	path := filepath.Join(dir, name)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil // none, or removed meanwhile
	}
	var sp store.SharedPage
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&sp); err != nil {
		d.logger.Warn("page cache: a page on disk does not decode", "err", fmt.Errorf("%s: %w", path, err))
		return nil
	}
	if !known {
		// Written by another process since this one listed the files.
		d.mu.Lock()
		if _, ok := d.files[name]; !ok && d.dir == dir {
			d.indexLocked(&diskFile{name: name, size: int64(len(b))})
			d.trimLocked()
		}
		d.mu.Unlock()
	}
	return sharedToCached(&sp)
}

func (d *diskPages) indexLocked(f *diskFile) {
	d.files[f.name] = d.order.PushBack(f)
	d.bytes += f.size
}

func (d *diskPages) trimLocked() {
	for d.bytes > d.limit && d.order.Len() > 0 {
		d.removeLocked(d.order.Front().Value.(*diskFile).name)
	}
}

func (d *diskPages) removeLocked(name string) {
	el := d.files[name]
	if el == nil {
		return
	}
	f := el.Value.(*diskFile)
	d.order.Remove(el)
	delete(d.files, name)
	d.bytes -= f.size
	_ = os.Remove(filepath.Join(d.dir, name))
}

// purge removes every file (the database was replaced), also those of
// other processes in a kept directory.
func (d *diskPages) purge() {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for name := range d.files {
		d.removeLocked(name)
	}
	if d.dir != "" {
		entries, _ := os.ReadDir(d.dir)
		for _, e := range entries {
			_ = os.Remove(filepath.Join(d.dir, e.Name()))
		}
	}
}

// size is the bytes the files hold.
func (d *diskPages) size() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.bytes
}

// close removes a temporary directory and its files; a kept one stays.
func (d *diskPages) close() {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dir != "" && d.kept == "" {
		_ = os.RemoveAll(d.dir)
	}
	d.dir, d.bytes = "", 0
	clear(d.files)
	d.order.Init()
}

// lookup answers the entry of key from memory or, failing that, from the
// disk tier (back into memory), within the staleness bound of get: the
// caller tells a hit from a stale page by its engagement and expiry.
func (pc *pageCache) lookup(key string, now time.Time) *cachedPage {
	if p := pc.get(key, now); p != nil || pc.disk == nil {
		return p
	}
	p := pc.disk.load(key)
	if p == nil || now.After(p.expires.Add(staleGrace)) {
		return nil
	}
	pc.put(key, p)
	return p
}
