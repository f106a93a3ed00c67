package channel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
)

// Why an image is not passed on; the runtime answers each with its text. Other fetch errors
// are transient (retried with the event) unless they wrap ErrPermanent (told the image is gone).
var (
	ErrImageTooLarge = errors.New("image too large")
	ErrImageType     = errors.New("image type not supported")
	// ErrImageSource: the image lives outside the channel's own file store (LINE's external
	// content provider, a file on another host); it is never fetched.
	ErrImageSource = errors.New("image source not supported")
)

// ImageFetcher is implemented by channels that receive images (KindImage): it downloads the
// event's picture from the channel's API within maxBytes and checks its type.
type ImageFetcher interface {
	FetchImage(ctx context.Context, ev Event, maxBytes int64) (chatlink.InboundImage, error)
}

// ReadImage reads an image download: a non-2xx status is an error (3xx, and 4xx but 408/429,
// permanent), a body over maxBytes is ErrImageTooLarge (stopped at the cap, whatever
// Content-Length claims), and the type is what the bytes are (sniffed), which must be one of
// config.ImageTypes and agree with a declared image type.
func ReadImage(res *http.Response, maxBytes int64) (chatlink.InboundImage, error) {
	defer res.Body.Close()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 4<<10))
		err := fmt.Errorf("image download: HTTP %d", res.StatusCode)
		// A redirect (the downloader follows none: to a sign-in page, another host) and 4xx but
		// 408/429 will not change on a retry.
		if res.StatusCode < 500 && res.StatusCode != http.StatusRequestTimeout && res.StatusCode != http.StatusTooManyRequests {
			return chatlink.InboundImage{}, fmt.Errorf("%w: %w", ErrPermanent, err)
		}
		return chatlink.InboundImage{}, err
	}
	if res.ContentLength > maxBytes {
		return chatlink.InboundImage{}, fmt.Errorf("%w: %d bytes declared, the cap is %d", ErrImageTooLarge, res.ContentLength, maxBytes)
	}
	data, err := io.ReadAll(io.LimitReader(res.Body, maxBytes+1))
	if err != nil {
		return chatlink.InboundImage{}, fmt.Errorf("image download: %w", err)
	}
	if int64(len(data)) > maxBytes {
		return chatlink.InboundImage{}, fmt.Errorf("%w: more than %d bytes", ErrImageTooLarge, maxBytes)
	}
	sniffed := http.DetectContentType(data)
	if !config.ImageTypeAllowed(sniffed) {
		return chatlink.InboundImage{}, fmt.Errorf("%w: the bytes are %s", ErrImageType, sniffed)
	}
	declared, _, _ := strings.Cut(res.Header.Get("Content-Type"), ";")
	declared = strings.ToLower(strings.TrimSpace(declared))
	if strings.HasPrefix(declared, "image/") && declared != sniffed && !(declared == "image/jpg" && sniffed == "image/jpeg") {
		return chatlink.InboundImage{}, fmt.Errorf("%w: declared %s, the bytes are %s", ErrImageType, declared, sniffed)
	}
	return chatlink.InboundImage{Data: data, MIMEType: sniffed}, nil
}

// humanBytes is a cap for people: "10 MB".
func humanBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
