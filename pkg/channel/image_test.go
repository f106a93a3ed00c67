package channel

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"
	"testing"
)

func TestReadImage(t *testing.T) {
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{0}, 20)...)
	jpeg := append([]byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00"), bytes.Repeat([]byte{0}, 20)...)
	gif := []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;")
	webp := []byte("RIFF\x1a\x00\x00\x00WEBPVP8 \x0e\x00\x00\x00")
	resp := func(status int, ctype string, body []byte, declared int64) *http.Response {
		h := http.Header{}
		if ctype != "" {
			h.Set("Content-Type", ctype)
		}
		if declared >= 0 {
			h.Set("Content-Length", strconv.FormatInt(declared, 10))
		}
		return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: declared}
	}
	for _, c := range []struct {
		name      string
		res       *http.Response
		max       int64
		mime      string
		err       error
		transient bool
	}{
		{"png", resp(200, "image/png", png, int64(len(png))), 100, "image/png", nil, false},
		{"jpeg declared as image/jpg", resp(200, "image/jpg", jpeg, -1), 100, "image/jpeg", nil, false},
		{"gif without a type", resp(200, "", gif, -1), 100, "image/gif", nil, false},
		{"webp", resp(200, "image/webp", webp, -1), 100, "image/webp", nil, false},
		{"declared too large", resp(200, "image/png", png, 1000), 100, "", ErrImageTooLarge, false},
		{"too large without a length", resp(200, "image/png", append(png, bytes.Repeat([]byte{1}, 200)...), -1), 100, "", ErrImageTooLarge, false},
		{"not an image", resp(200, "image/png", []byte("<html>sign in</html>"), -1), 100, "", ErrImageType, false},
		{"svg", resp(200, "image/svg+xml", []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`), -1), 100, "", ErrImageType, false},
		{"type mismatch", resp(200, "image/gif", png, -1), 100, "", ErrImageType, false},
		{"gone", resp(404, "application/json", []byte(`{}`), -1), 100, "", ErrPermanent, false},
		{"redirect", resp(302, "", nil, -1), 100, "", ErrPermanent, false},
		{"server error", resp(503, "", nil, -1), 100, "", nil, true},
		{"rate limited", resp(429, "", nil, -1), 100, "", nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			img, err := ReadImage(c.res, c.max)
			switch {
			case c.transient:
				if err == nil || errors.Is(err, ErrPermanent) || errors.Is(err, ErrImageTooLarge) || errors.Is(err, ErrImageType) {
					t.Fatalf("want a transient error, got %v", err)
				}
			case c.err != nil:
				if !errors.Is(err, c.err) {
					t.Fatalf("err %v, want %v", err, c.err)
				}
			case err != nil || img.MIMEType != c.mime || len(img.Data) == 0:
				t.Fatalf("image %q (%d bytes), %v", img.MIMEType, len(img.Data), err)
			}
		})
	}
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{10 << 20: "10 MB", 2048: "2 KB", 500: "500 bytes", 1536 << 10: "1536 KB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
