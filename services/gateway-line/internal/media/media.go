// Package media serves the pictures the LINE gateway sends (screenshots) to LINE's servers: an
// image message names its picture by HTTPS address, so each image is kept for a while in this
// process and served from the public listener under an unguessable, expiring, signed address.
package media

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/domain"
)

// Path is where the pictures are served (a name follows).
const Path = "/line/media/"

// MaxBytes bounds the pictures kept at once; the oldest go first when a new one does not fit.
const MaxBytes = 64 << 20

type entry struct {
	data        []byte
	contentType string
	expires     time.Time
}

// Store keeps published pictures until they expire and serves them.
type Store struct {
	base string
	key  []byte
	ttl  time.Duration
	now  func() time.Time

	mu    sync.Mutex
	items map[string]entry
	order []string
	bytes int
}

// New returns a store whose addresses start with base (the gateway's public HTTPS address) and
// stay valid for ttl. The signing key is made here: addresses die with the process, as do the
// pictures it keeps.
func New(base string, ttl time.Duration, now func() time.Time) (*Store, error) {
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("%w: public base URL %q is not an https URL", domain.ErrInvalid, base)
	}
	if ttl <= 0 {
		return nil, fmt.Errorf("%w: media lifetime %s", domain.ErrInvalid, ttl)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("media key: %w", err)
	}
	if now == nil {
		now = time.Now
	}
	return &Store{base: strings.TrimRight(base, "/"), key: key, ttl: ttl, now: now, items: map[string]entry{}}, nil
}

// Publish keeps img and returns its addresses (the same one for the original and the preview:
// the images are within the preview's 1 MB).
func (s *Store) Publish(img chatlink.Image) (domain.ImageURLs, error) {
	if !chatlink.ImageTypeOK(img.ContentType) || len(img.Data) == 0 || len(img.Data) > chatlink.MaxImageBytes {
		return domain.ImageURLs{}, fmt.Errorf("%w: image %s of %d bytes", domain.ErrInvalid, img.ContentType, len(img.Data))
	}
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		return domain.ImageURLs{}, fmt.Errorf("media name: %w", err)
	}
	ext := ".png"
	if img.ContentType == "image/jpeg" {
		ext = ".jpg"
	}
	name := hex.EncodeToString(raw) + ext
	exp := s.now().Add(s.ttl)
	s.mu.Lock()
	s.expire()
	for s.bytes+len(img.Data) > MaxBytes && len(s.order) > 0 {
		s.drop(s.order[0])
	}
	s.items[name] = entry{data: img.Data, contentType: img.ContentType, expires: exp}
	s.order = append(s.order, name)
	s.bytes += len(img.Data)
	s.mu.Unlock()
	e := strconv.FormatInt(exp.Unix(), 10)
	u := s.base + Path + name + "?e=" + e + "&s=" + s.sign(name, e)
	return domain.ImageURLs{Original: u, Preview: u}, nil
}

func (s *Store) sign(name, exp string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(name + "\n" + exp))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// expire drops what has expired; s.mu is held.
func (s *Store) expire() {
	now := s.now()
	for len(s.order) > 0 {
		if e, ok := s.items[s.order[0]]; ok && now.Before(e.expires) {
			return
		}
		s.drop(s.order[0])
	}
}

// drop forgets name, the oldest; s.mu is held.
func (s *Store) drop(name string) {
	if e, ok := s.items[name]; ok {
		s.bytes -= len(e.data)
		delete(s.items, name)
	}
	s.order = s.order[1:]
}

// errBadSignature: an address this process did not sign.
var errBadSignature = errors.New("bad signature")

// ServeHTTP answers GET <Path><name>?e=<expiry>&s=<signature>: 403 for an address this
// process did not sign, 404 for an expired or forgotten one.
func (s *Store) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, Path)
	exp, sig := r.URL.Query().Get("e"), r.URL.Query().Get("s")
	if err := s.check(name, exp, sig); err != nil {
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	when, _ := strconv.ParseInt(exp, 10, 64)
	if !s.now().Before(time.Unix(when, 0)) {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	e, ok := s.items[name]
	s.mu.Unlock()
	if !ok || !s.now().Before(e.expires) {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", e.contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(e.data)))
	w.Header().Set("Cache-Control", "private, max-age="+strconv.Itoa(int(e.expires.Sub(s.now()).Seconds())))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(e.data)
}

func (s *Store) check(name, exp, sig string) error {
	if name == "" || strings.Contains(name, "/") || exp == "" || sig == "" {
		return errBadSignature
	}
	if _, err := strconv.ParseInt(exp, 10, 64); err != nil {
		return errBadSignature
	}
	if !hmac.Equal([]byte(sig), []byte(s.sign(name, exp))) {
		return errBadSignature
	}
	return nil
}
