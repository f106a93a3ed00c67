package domain

import (
	"fmt"
	"strings"
	"time"
)

// ImageRecord is one row of the image audit log: one picture sent to a model, for the job
// whose turn sent it. The log is append-only like the approval events.
type ImageRecord struct {
	ID        int64
	JobID     string
	SessionID string
	// SHA256 is the lowercase hex hash of the bytes, computed by approval.
	SHA256   string
	Size     int64
	MIMEType string
	// Provider and Model are where the image went.
	Provider string
	Model    string
	At       time.Time
	// Kept: the bytes were stored (images.keep) under the hash's name.
	Kept bool
}

// ImageFilter selects image records; zero values do not filter.
type ImageFilter struct {
	JobID string
	Since time.Time
	Limit int
}

// MaxImageList bounds one listing.
const MaxImageList = 500

// imageTypes are the picture types a model is given (config.ImageTypes).
var imageTypes = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}

// ValidateImage checks what a record needs before it is written.
func ValidateImage(r ImageRecord) error {
	switch {
	case r.Size <= 0:
		return fmt.Errorf("%w: image is empty", ErrInvalid)
	case !imageTypes[r.MIMEType]:
		return fmt.Errorf("%w: image type %q is not one of image/jpeg, image/png, image/gif, image/webp", ErrInvalid, r.MIMEType)
	case strings.TrimSpace(r.Provider) == "" || strings.TrimSpace(r.Model) == "":
		return fmt.Errorf("%w: the destination provider and model are required", ErrInvalid)
	case len(r.Provider) > 64 || len(r.Model) > 200 || len(r.SessionID) > 512:
		return fmt.Errorf("%w: provider, model or session id too long", ErrInvalid)
	}
	return nil
}
