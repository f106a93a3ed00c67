package fakeslack

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/internal/locked"
)

// Upload is a file shared with files.completeUploadExternal after its bytes arrived at the URL
// files.getUploadURLExternal gave.
type Upload struct {
	FileID         string
	Filename       string
	Title          string
	AltText        string
	Channel        string
	ThreadTS       string
	InitialComment string
	Data           []byte
}

// pendingFile is a file between files.getUploadURLExternal and files.completeUploadExternal.
type pendingFile struct {
	name, alt string
	length    int
	data      []byte
	uploaded  bool
	completed bool
}

// maxUpload is Slack's file size limit.
const maxUpload = 1 << 30

// Uploads returns the files shared so far.
func (s *Server) Uploads() []Upload {
	return locked.Copy(&s.mu, &s.uploads)
}

// registerFiles mounts the upload flow.
func (s *Server) registerFiles(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/files.getUploadURLExternal", s.getUploadURL)
	mux.HandleFunc("POST /upload/{id}", s.uploadBytes)
	mux.HandleFunc("POST /api/files.completeUploadExternal", s.completeUpload)
}

func (s *Server) getUploadURL(w http.ResponseWriter, r *http.Request) {
	vals, err := params(r)
	if err != nil {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_form_data"})
		return
	}
	if !s.authed(w, r, vals) {
		return
	}
	name := vals.Get("filename")
	length, err := strconv.Atoi(vals.Get("length"))
	if name == "" || err != nil || length <= 0 {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_arguments"})
		return
	}
	if length > maxUpload {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "file_too_large"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.files == nil {
		s.files = map[string]*pendingFile{}
	}
	s.seq++
	id := fmt.Sprintf("F%08d", s.seq)
	s.files[id] = &pendingFile{name: name, alt: vals.Get("alt_txt"), length: length}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "upload_url": s.URL + "/upload/" + id, "file_id": id})
}

// uploadBytes takes the file as Slack's upload URL does: the raw body or a multipart form's
// file part.
func (s *Server) uploadBytes(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var data []byte
	var err error
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		f, _, ferr := r.FormFile("file")
		if ferr != nil {
			http.Error(w, "no file part", http.StatusBadRequest)
			return
		}
		data, err = io.ReadAll(io.LimitReader(f, maxUpload+1))
		f.Close()
	} else {
		data, err = io.ReadAll(io.LimitReader(r.Body, maxUpload+1))
	}
	if err != nil {
		http.Error(w, "read failed", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.files[id]
	if !ok {
		http.Error(w, "unknown upload", http.StatusNotFound)
		return
	}
	if len(data) != p.length {
		s.problems = append(s.problems, fmt.Sprintf("upload %s: %d bytes, %d announced", id, len(data), p.length))
	}
	p.data, p.uploaded = data, true
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, "OK - "+strconv.Itoa(len(data)))
}

func (s *Server) completeUpload(w http.ResponseWriter, r *http.Request) {
	vals, err := params(r)
	if err != nil {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_form_data"})
		return
	}
	if !s.authed(w, r, vals) {
		return
	}
	var files []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(vals.Get("files")), &files); err != nil || len(files) == 0 || len(files) > 100 {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_arguments"})
		return
	}
	channel, thread := vals.Get("channel_id"), vals.Get("thread_ts")
	if thread != "" && channel == "" {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_arguments"})
		return
	}
	if vals.Get("initial_comment") != "" && vals.Get("blocks") != "" {
		s.mu.Lock()
		s.problems = append(s.problems, "files.completeUploadExternal with both initial_comment and blocks")
		s.mu.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, f := range files {
		p, ok := s.files[f.ID]
		if !ok || !p.uploaded || p.completed {
			writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "file_not_found"})
			return
		}
		p.completed = true
		s.uploads = append(s.uploads, Upload{FileID: f.ID, Filename: p.name, Title: f.Title, AltText: p.alt, Channel: channel,
			ThreadTS: thread, InitialComment: vals.Get("initial_comment"), Data: p.data})
		out = append(out, map[string]any{"id": f.ID, "title": f.Title})
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "files": out})
}
