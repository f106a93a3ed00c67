package workspace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/picoclaw-suite/picoclaw/pkg/redact"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/domain"
)

// Caps of the read-only view. Requests may ask for less, never for more.
const (
	DefaultTreeDepth   = 8
	DefaultTreeEntries = 2000
	MaxTreeEntries     = 20000
	DefaultReadBytes   = 256 << 10
	MaxReadBytes       = 1 << 20
	// maxFileBytes bounds what is read to hash a file; bigger files are refused.
	maxFileBytes       = 16 << 20
	DefaultMatches     = 200
	MaxMatches         = 2000
	searchFileBytes    = 1 << 20
	maxMatchLine       = 300
	maxWalkFiles       = 100000
	binarySniff        = 8000
	maxSearchPatternSz = 1000
)

// Entry is one file or directory of the tree.
type Entry struct {
	Path string
	Dir  bool
	Size int64
}

// TreeOptions select what ListTree returns.
type TreeOptions struct {
	Dir        string
	MaxDepth   int
	MaxEntries int
	// Search, when set, is run over the same walk (its Dir is ignored; the whole listed tree is
	// searched, past the entry cap too).
	Search *SearchOptions
}

// Tree is a listing.
type Tree struct {
	Entries   []Entry
	Truncated bool
	// Withheld counts files left out because their names say they hold secrets.
	Withheld int
	// Search is the answer to TreeOptions.Search.
	Search *SearchResult
}

// cleanDir checks a directory argument ("" or "." is the root).
func (w *Workspace) cleanDir(dir string) (string, error) {
	if dir == "" || dir == "." || dir == "/" {
		return "", nil
	}
	c, err := domain.CleanPath(dir)
	if err != nil {
		return "", err
	}
	if err := (disk{root: w.root}).noLinks(c); err != nil {
		return "", err
	}
	fi, err := w.root.Stat(c)
	if err != nil {
		return "", rootErr(c, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%w: %s is not a directory", domain.ErrInvalid, c)
	}
	return c, nil
}

// ignorerFor loads the .gitignore files from the root down to dir's parent, so a walk that
// starts below the root honours them too.
func (w *Workspace) ignorerFor(dir string) ignorer {
	var ig ignorer
	if dir == "" {
		return ig
	}
	parts := strings.Split(dir, "/")
	for i := 0; i < len(parts); i++ {
		base := strings.Join(parts[:i], "/")
		if s, ok := w.loadIgnore(base); ok {
			ig = append(ig, s)
		}
	}
	return ig
}

func (w *Workspace) loadIgnore(dir string) (ignoreSet, bool) {
	name := path.Join(dir, ".gitignore")
	if dir == "" {
		name = ".gitignore"
	}
	fi, err := w.root.Lstat(name)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 1<<20 {
		return ignoreSet{}, false
	}
	data, err := w.root.ReadFile(name)
	if err != nil {
		return ignoreSet{}, false
	}
	s := parseIgnore(dir, string(data))
	return s, len(s.rules) > 0
}

type walkItem struct {
	dir   string
	depth int
	ig    ignorer
}

// walk visits the tree below dir breadth first, in name order, skipping git internals,
// symlinks and what .gitignore excludes. visit returns false to stop.
func (w *Workspace) walk(dir string, maxDepth int, visit func(dir *dirHandle, p string, d fs.DirEntry, depth int) bool) error {
	queue := []walkItem{{dir: dir, depth: 0, ig: w.ignorerFor(dir)}}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		open := it.dir
		if open == "" {
			open = "."
		}
		// One open per directory; a root for reading its files is opened only when needed.
		f, err := w.root.Open(open)
		if err != nil {
			if it.dir == dir {
				return rootErr(open, err)
			}
			continue // a directory that vanished or cannot be read is left out
		}
		ents, err := f.ReadDir(-1)
		_ = f.Close()
		if err != nil && it.dir == dir {
			return rootErr(open, err)
		}
		sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
		ig := it.ig
		if hasEntry(ents, ".gitignore") {
			if s, ok := w.loadIgnore(it.dir); ok {
				ig = append(ig[:len(ig):len(ig)], s)
			}
		}
		h := &dirHandle{w: w, path: open}
		stop := false
		for _, e := range ents {
			name := e.Name()
			if domain.IsGitDirName(name) || e.Type()&fs.ModeSymlink != 0 {
				continue
			}
			if !e.IsDir() && !e.Type().IsRegular() {
				continue
			}
			p := name
			if it.dir != "" {
				p = it.dir + "/" + name
			}
			if ig.ignored(p, e.IsDir()) {
				continue
			}
			if !visit(h, p, e, it.depth+1) {
				stop = true
				break
			}
			if e.IsDir() && (maxDepth <= 0 || it.depth+1 < maxDepth) {
				queue = append(queue, walkItem{dir: p, depth: it.depth + 1, ig: ig})
			}
		}
		h.close()
		if stop {
			return nil
		}
	}
	return nil
}

// dirHandle is a directory being walked; its root (for reading the files in it) is opened on
// first use and closed when the walk leaves the directory.
type dirHandle struct {
	w    *Workspace
	path string
	root *os.Root
}

// ReadFile reads the file called name in the directory, confined like every read.
func (h *dirHandle) ReadFile(name string) ([]byte, error) {
	if h.root == nil {
		r, err := h.w.root.OpenRoot(h.path)
		if err != nil {
			return nil, err
		}
		h.root = r
	}
	return h.root.ReadFile(name)
}

func (h *dirHandle) close() {
	if h.root != nil {
		_ = h.root.Close()
	}
}

func hasEntry(ents []fs.DirEntry, name string) bool {
	for _, e := range ents {
		if e.Name() == name {
			return true
		}
	}
	return false
}

func clamp(v, def, max int) int {
	if v <= 0 {
		return def
	}
	if v > max {
		return max
	}
	return v
}

// ListTree lists the workspace below opts.Dir within the caps.
func (w *Workspace) ListTree(opts TreeOptions) (Tree, error) {
	dir, err := w.cleanDir(opts.Dir)
	if err != nil {
		return Tree{}, err
	}
	depth := clamp(opts.MaxDepth, DefaultTreeDepth, 64)
	limit := clamp(opts.MaxEntries, DefaultTreeEntries, MaxTreeEntries)
	var t Tree
	var sr *searcher
	walkDepth := depth
	if opts.Search != nil {
		if sr, err = newSearcher(w, *opts.Search); err != nil {
			return Tree{}, err
		}
		walkDepth = 0 // the search goes below the listing's depth
	}
	full := false
	err = w.walk(dir, walkDepth, func(in *dirHandle, p string, d fs.DirEntry, at int) bool {
		searching := sr != nil && sr.visit(in, p, d)
		if full || at > depth {
			return searching
		}
		if !d.IsDir() && domain.IsSecretPath(p) {
			t.Withheld++
			return true
		}
		if len(t.Entries) >= limit {
			t.Truncated, full = true, true
			return searching
		}
		e := Entry{Path: p, Dir: d.IsDir()}
		if !e.Dir {
			if fi, err := d.Info(); err == nil {
				e.Size = fi.Size()
			}
		}
		t.Entries = append(t.Entries, e)
		return true
	})
	if sr != nil {
		t.Search = &sr.res
	}
	return t, err
}

// ReadOptions select part of a file.
type ReadOptions struct {
	StartLine, EndLine int
	MaxBytes           int
}

// File is a read file. SHA256 is of the whole file.
type File struct {
	Path       string
	Content    string
	SHA256     string
	Size       int64
	Binary     bool
	Truncated  bool
	TotalLines int
}

// IsBinary reports whether data looks like a binary file: a NUL byte near the start or
// invalid UTF-8.
func IsBinary(data []byte) bool {
	head := data
	if len(head) > binarySniff {
		head = head[:binarySniff]
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	// Trim a rune cut at the sniff boundary.
	for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.Valid(head); i++ {
		if len(data) == len(head) {
			return true
		}
		head = head[:len(head)-1]
	}
	return !utf8.Valid(head)
}

// SHA256 is the hex sha256 of data: the base hash a patch is bound to.
func SHA256(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// ReadFile reads one file with the same confinement as writes. Files that hold secrets, by
// name or by content, are refused with ErrPermission.
func (w *Workspace) ReadFile(name string, opts ReadOptions) (File, error) {
	p, err := domain.CleanPath(name)
	if err != nil {
		return File{}, err
	}
	if domain.IsSecretPath(p) {
		return File{}, fmt.Errorf("%w: %s holds secrets and is never shown", domain.ErrPermission, p)
	}
	if fi, err := w.root.Lstat(p); err == nil && fi.Mode().IsRegular() && fi.Size() > maxFileBytes {
		return File{}, fmt.Errorf("%w: %s is %d bytes, the limit is %d", domain.ErrInvalid, p, fi.Size(), maxFileBytes)
	}
	data, _, exists, err := w.Disk().Read(p)
	if err != nil {
		return File{}, err
	}
	if !exists {
		return File{}, fmt.Errorf("%w: %s", domain.ErrNotFound, p)
	}
	f := File{Path: p, SHA256: SHA256(data), Size: int64(len(data))}
	if IsBinary(data) {
		f.Binary = true
		return f, nil
	}
	text := string(data)
	if domain.HasSecretContent(text) {
		return File{}, fmt.Errorf("%w: %s holds secret-looking content and is never shown", domain.ErrPermission, p)
	}
	lines := strings.SplitAfter(text, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	f.TotalLines = len(lines)
	start, end := opts.StartLine, opts.EndLine
	if start <= 0 {
		start = 1
	}
	if end <= 0 || end > len(lines) {
		end = len(lines)
	}
	if start > end {
		if start > len(lines) && len(lines) > 0 {
			return File{}, fmt.Errorf("%w: %s has %d lines, start_line %d", domain.ErrInvalid, p, len(lines), start)
		}
		return f, nil
	}
	if start > 1 || end < len(lines) {
		f.Truncated = true
	}
	out := strings.Join(lines[start-1:end], "")
	limit := clamp(opts.MaxBytes, DefaultReadBytes, MaxReadBytes)
	if len(out) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(out[cut]) {
			cut--
		}
		out, f.Truncated = out[:cut], true
	}
	f.Content = out
	return f, nil
}

// SearchOptions select a search.
type SearchOptions struct {
	Query           string
	Regexp          bool
	CaseInsensitive bool
	Dir             string
	MaxMatches      int
}

// Match is one matching line.
type Match struct {
	Path string
	Line int
	Text string
}

// SearchResult is what Search found.
type SearchResult struct {
	Matches   []Match
	Truncated bool
}

// Search finds lines matching a literal or a regular expression in the text files below
// opts.Dir (not ignored, not secret, not binary, at most 1 MiB each). Files with
// secret-looking content are left out; returned lines are masked as well.
func (w *Workspace) Search(opts SearchOptions) (SearchResult, error) {
	dir, err := w.cleanDir(opts.Dir)
	if err != nil {
		return SearchResult{}, err
	}
	sr, err := newSearcher(w, opts)
	if err != nil {
		return SearchResult{}, err
	}
	err = w.walk(dir, 0, func(in *dirHandle, p string, d fs.DirEntry, _ int) bool { return sr.visit(in, p, d) })
	return sr.res, err
}

// searcher is one search over a walk: it looks at each file the walk visits until its match cap.
type searcher struct {
	w        *Workspace
	re       *regexp.Regexp
	literals [][]byte
	limit    int
	files    int
	res      SearchResult
	done     bool
}

func newSearcher(w *Workspace, opts SearchOptions) (*searcher, error) {
	if opts.Query == "" {
		return nil, fmt.Errorf("%w: empty query", domain.ErrInvalid)
	}
	if len(opts.Query) > maxSearchPatternSz {
		return nil, fmt.Errorf("%w: query longer than %d bytes", domain.ErrInvalid, maxSearchPatternSz)
	}
	expr := opts.Query
	if !opts.Regexp {
		expr = regexp.QuoteMeta(expr)
	}
	if opts.CaseInsensitive {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("%w: regexp: %v", domain.ErrInvalid, err)
	}
	sr := &searcher{w: w, re: re, limit: clamp(opts.MaxMatches, DefaultMatches, MaxMatches)}
	if !opts.Regexp && !opts.CaseInsensitive {
		sr.literals = [][]byte{[]byte(opts.Query)}
	} else {
		sr.literals = requiredLiterals(expr)
	}
	return sr, nil
}

// visit searches the file p; false once the search is complete (cap reached).
func (sr *searcher) visit(in *dirHandle, p string, d fs.DirEntry) bool {
	if sr.done {
		return false
	}
	ok := sr.file(in, p, d)
	if !ok {
		sr.done = true
	}
	return ok
}

func (sr *searcher) file(in *dirHandle, p string, d fs.DirEntry) bool {
	w, re, literals, limit, res := sr.w, sr.re, sr.literals, sr.limit, &sr.res
	if d.IsDir() || domain.IsSecretPath(p) {
		return true
	}
	if sr.files++; sr.files > maxWalkFiles {
		res.Truncated = true
		return false
	}
	fi, err := d.Info()
	if err != nil || fi.Size() > searchFileBytes || fi.Size() == 0 {
		return true
	}
	stamp, stamped := stampOf(fi)
	data, cached := w.cache.get(p, stamp)
	if !cached || !stamped {
		if data, err = in.ReadFile(d.Name()); err != nil {
			return true
		}
		if stamped {
			w.cache.put(p, stamp, data)
		}
	}
	if literals != nil && !containsAny(data, literals) {
		return true
	}
	if !re.Match(data) {
		return true
	}
	if IsBinary(data) {
		return true
	}
	text := string(data)
	if domain.HasSecretContent(text) {
		return true
	}
	line := 0
	for rest := text; rest != ""; {
		var l string
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			l, rest = rest[:i], rest[i+1:]
		} else {
			l, rest = rest, ""
		}
		line++
		if !re.MatchString(l) {
			continue
		}
		if len(res.Matches) >= limit {
			res.Truncated = true
			return false
		}
		if len(l) > maxMatchLine {
			cut := maxMatchLine
			for cut > 0 && !utf8.RuneStart(l[cut]) {
				cut--
			}
			l = l[:cut] + "…"
		}
		res.Matches = append(res.Matches, Match{Path: p, Line: line, Text: redact.Secrets(l)})
	}
	return true
}
