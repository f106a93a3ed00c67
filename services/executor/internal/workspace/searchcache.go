package workspace

import (
	"bytes"
	"io/fs"
	"regexp/syntax"
	"sync"
	"syscall"
	"time"
)

// requiredLiterals returns strings of which every match of the expression contains at least
// one, or nil when no such set is known. A file holding none of them cannot match, which
// spares running the regular expression over most files of a large tree.
func requiredLiterals(expr string) [][]byte {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	lits := mustContain(re.Simplify())
	if len(lits) == 0 {
		return nil
	}
	out := make([][]byte, len(lits))
	for i, l := range lits {
		out[i] = []byte(l)
	}
	return out
}

func mustContain(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 || len(re.Rune) == 0 {
			return nil
		}
		return []string{string(re.Rune)}
	case syntax.OpCapture:
		return mustContain(re.Sub[0])
	case syntax.OpPlus:
		return mustContain(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return mustContain(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []string
		for _, s := range re.Sub {
			if l := mustContain(s); l != nil && (best == nil || shortest(l) > shortest(best)) {
				best = l
			}
		}
		return best
	case syntax.OpAlternate:
		var all []string
		for _, s := range re.Sub {
			l := mustContain(s)
			if l == nil {
				return nil
			}
			all = append(all, l...)
		}
		return all
	}
	return nil
}

func shortest(ls []string) int {
	n := -1
	for _, l := range ls {
		if n < 0 || len(l) < n {
			n = len(l)
		}
	}
	return n
}

func containsAny(data []byte, lits [][]byte) bool {
	for _, l := range lits {
		if bytes.Contains(data, l) {
			return true
		}
	}
	return false
}

// fileCache keeps the content of the files a search read, keyed by path and checked against
// the file's identity and change times at every use, so an edit is seen at once while an
// unchanged tree is searched without reading its files again.
type fileCache struct {
	mu    sync.Mutex
	files map[string]cachedFile
	bytes int
}

type cachedFile struct {
	stamp fileStamp
	data  []byte
}

// fileStamp identifies a version of a file: a write changes mtime and ctime, a replacement
// the inode.
type fileStamp struct {
	dev, ino     uint64
	size         int64
	mtime, ctime time.Time
}

// stampSettle is how old a file's last change must be before its content is cached: file
// times advance in clock ticks, so a second write within the tick of the first could leave
// the stamp unchanged.
const stampSettle = 100 * time.Millisecond

// searchCacheBytes bounds the cache.
const searchCacheBytes = 64 << 20

func stampOf(fi fs.FileInfo) (fileStamp, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileStamp{}, false
	}
	return fileStamp{dev: uint64(st.Dev), ino: st.Ino, size: fi.Size(), mtime: fi.ModTime(),
		ctime: time.Unix(st.Ctim.Sec, st.Ctim.Nsec)}, true
}

func (c *fileCache) get(p string, s fileStamp) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.files[p]
	if !ok || f.stamp != s {
		return nil, false
	}
	return f.data, true
}

// put keeps data unless the file changed within stampSettle.
func (c *fileCache) put(p string, s fileStamp, data []byte) {
	if time.Since(s.mtime) < stampSettle || time.Since(s.ctime) < stampSettle {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.files == nil {
		c.files = map[string]cachedFile{}
	}
	if old, ok := c.files[p]; ok {
		c.bytes -= len(old.data)
	}
	if c.bytes+len(data) > searchCacheBytes {
		c.files, c.bytes = map[string]cachedFile{}, 0
	}
	c.files[p] = cachedFile{stamp: s, data: data}
	c.bytes += len(data)
}
