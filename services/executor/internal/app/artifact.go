package app

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/browser"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/domain"
)

// Artifact is a file a job produced outside the workspace (a screenshot), kept under the
// artifacts directory in a directory named after the job.
type Artifact struct {
	Path     string
	MIMEType string
	Size     int
	SHA256   string
}

// String is the line the command result carries: path, type, size and digest.
func (a Artifact) String() string {
	return fmt.Sprintf("screenshot saved: %s (%s, %d bytes, sha256 %s)", a.Path, a.MIMEType, a.Size, a.SHA256)
}

var imageExt = map[string]string{"image/png": ".png", "image/jpeg": ".jpg", "image/webp": ".webp", "image/gif": ".gif"}

// saveArtifact writes img as <dir>/<job id>/<index>-<kind><ext>. The job id is checked again
// here because it names a directory.
func saveArtifact(dir, jobID string, index int, kind string, img *browser.Image) (Artifact, error) {
	if dir == "" {
		return Artifact{}, domain.Fail(domain.ErrUnavailable, domain.CodeArtifactsMissing)
	}
	if !jobid.Valid(jobID) {
		return Artifact{}, domain.FailWith(domain.ErrInvalid, fmt.Errorf("job id %q cannot name an artifacts directory", jobID), domain.CodeArtifactsIO)
	}
	ext, ok := imageExt[img.MIMEType]
	if !ok {
		ext = ".img"
	}
	jobDir := filepath.Join(dir, jobID)
	if err := os.MkdirAll(jobDir, 0o750); err != nil {
		return Artifact{}, domain.FailWith(nil, err, domain.CodeArtifactsIO)
	}
	path := filepath.Join(jobDir, fmt.Sprintf("%03d-%s%s", index, kind, ext))
	if err := os.WriteFile(path, img.Data, 0o640); err != nil {
		return Artifact{}, domain.FailWith(nil, err, domain.CodeArtifactsIO)
	}
	sum := sha256.Sum256(img.Data)
	return Artifact{Path: path, MIMEType: img.MIMEType, Size: len(img.Data), SHA256: hex.EncodeToString(sum[:])}, nil
}
