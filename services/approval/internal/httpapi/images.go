package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// imageView is one image audit record on the REST API.
type imageView struct {
	ID         int64     `json:"id"`
	JobID      string    `json:"job_id"`
	SessionID  string    `json:"session_id"`
	SHA256     string    `json:"sha256"`
	SizeBytes  int64     `json:"size_bytes"`
	MIMEType   string    `json:"mime_type"`
	Provider   string    `json:"provider"`
	Model      string    `json:"model"`
	RecordedAt time.Time `json:"recorded_at"`
	Kept       bool      `json:"kept"`
}

// listImages is GET /v1/images?job=&since=&limit=: the image audit log, newest first. since is
// an RFC 3339 time or a duration back from now (24h).
func (a *API) listImages(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := domain.ImageFilter{JobID: strings.TrimSpace(q.Get("job"))}
	var err error
	if f.Limit, err = intParam(q.Get("limit"), 100); err != nil || f.Limit < 1 || f.Limit > domain.MaxImageList {
		writeError(w, r, http.StatusBadRequest, "invalid_argument", TextLimit, strconv.Itoa(domain.MaxImageList))
		return
	}
	if s := strings.TrimSpace(q.Get("since")); s != "" {
		if d, derr := time.ParseDuration(s); derr == nil && d > 0 {
			f.Since = a.now().Add(-d)
		} else if t, terr := time.Parse(time.RFC3339, s); terr == nil {
			f.Since = t
		} else {
			writeError(w, r, http.StatusBadRequest, "invalid_argument", TextSince)
			return
		}
	}
	recs, err := a.svc.ListImages(r.Context(), f)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := struct {
		Images []imageView `json:"images"`
	}{Images: []imageView{}}
	for _, x := range recs {
		out.Images = append(out.Images, imageView{ID: x.ID, JobID: x.JobID, SessionID: x.SessionID, SHA256: x.SHA256, SizeBytes: x.Size,
			MIMEType: x.MIMEType, Provider: x.Provider, Model: x.Model, RecordedAt: x.At, Kept: x.Kept})
	}
	writeJSON(w, http.StatusOK, out)
}
