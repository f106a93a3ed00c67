package config

// Images is the images: section: how large a picture a channel accepts (the gateways fetch it,
// chat-mio passes it to the vision model) and whether approval keeps the bytes of the pictures
// it records in the image audit log (the record itself is always written).
type Images struct {
	// MaxBytes caps one image: a bigger one is refused with a reply, never sent to a model.
	MaxBytes int64 `yaml:"max_bytes"`
	// Keep stores the bytes of every recorded image in KeepDir (off by default: the log keeps
	// the hash, size and type only).
	Keep bool `yaml:"keep"`
	// KeepDir is where kept images go (one file per SHA-256); the embedded suite uses
	// <data>/images. Required when Keep is on.
	KeepDir string `yaml:"keep_dir"`
	// KeepMaxBytes bounds the kept images together; beyond it new images are recorded but not kept.
	KeepMaxBytes int64 `yaml:"keep_max_bytes"`
}

// DefaultImages are the defaults: 10 MiB per image, nothing kept (1 GiB when keeping).
func DefaultImages() Images {
	return Images{MaxBytes: 10 << 20, KeepMaxBytes: 1 << 30}
}

// ImageTypes are the picture types the suite passes to a model.
var ImageTypes = []string{"image/jpeg", "image/png", "image/gif", "image/webp"}

// ImageTypeAllowed reports whether mime is one of ImageTypes.
func ImageTypeAllowed(mime string) bool {
	for _, t := range ImageTypes {
		if t == mime {
			return true
		}
	}
	return false
}

// Validate checks max_bytes, the key every service that handles images reads, and names it.
func (i Images) Validate() error {
	var errs Errors
	if i.MaxBytes <= 0 || i.MaxBytes > 50<<20 {
		errs.Addf("images.max_bytes", "must be 1..52428800 (50 MiB), got %d", i.MaxBytes)
	}
	return errs.Err()
}

// ValidateKeep checks the keys of keeping images (approval's).
func (i Images) ValidateKeep() error {
	var errs Errors
	if i.Keep && i.KeepDir == "" {
		errs.Addf("images.keep_dir", "must be set when images.keep is true")
	}
	if i.KeepMaxBytes < 0 {
		errs.Addf("images.keep_max_bytes", "must not be negative, got %d", i.KeepMaxBytes)
	}
	return errs.Err()
}
