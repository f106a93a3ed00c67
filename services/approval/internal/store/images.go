package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// limitOf is the page size of an image listing on either engine.
func limitOf(f domain.ImageFilter) int {
	if f.Limit <= 0 || f.Limit > domain.MaxImageList {
		return domain.MaxImageList
	}
	return f.Limit
}

// ImageFiles keeps the bytes of recorded images (images.keep) in one directory, one file per
// SHA-256 (the same picture twice is one file), within a bound on their total size.
type ImageFiles struct {
	dir string
	max int64

	mu    sync.Mutex
	total int64
}

var _ app.ImageKeeper = (*ImageFiles)(nil)

// OpenImageFiles creates dir (0700) when needed and counts what it holds already.
func OpenImageFiles(dir string, maxTotal int64) (*ImageFiles, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("images.keep_dir: %w", err)
	}
	f := &ImageFiles{dir: dir, max: maxTotal}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("images.keep_dir: %w", err)
	}
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			f.total += info.Size()
		}
	}
	return f, nil
}

var imageExt = map[string]string{"image/jpeg": ".jpg", "image/png": ".png", "image/gif": ".gif", "image/webp": ".webp"}

// Keep writes data as <sha><ext> (durably: written, synced, renamed) unless it is there
// already; false when the bound would be passed.
func (f *ImageFiles) Keep(_ context.Context, sha, mime string, data []byte) (bool, error) {
	if len(sha) != 64 || strings.ContainsAny(sha, `/\.`) {
		return false, fmt.Errorf("%w: bad image hash", domain.ErrInvalid)
	}
	name := filepath.Join(f.dir, sha+imageExt[mime])
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := os.Stat(name); err == nil {
		return true, nil
	}
	if f.max > 0 && f.total+int64(len(data)) > f.max {
		return false, nil
	}
	tmp, err := os.CreateTemp(f.dir, ".incoming-*")
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return false, err
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return false, err
	}
	if err := tmp.Close(); err != nil {
		return false, err
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return false, err
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		return false, err
	}
	f.total += int64(len(data))
	return true, nil
}
