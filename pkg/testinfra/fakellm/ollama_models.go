package fakellm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
)

// ollamaState is the fake Ollama's model store: what /api/tags lists, what /api/pull and
// /api/create add, and the failures a test switches on until a restart.
type ollamaState struct {
	mu sync.Mutex
	// restricted: only names (and what was pulled or created) exist; otherwise every name does.
	restricted bool
	names      []string
	created    map[string]CreatedModel
	// missing are models that answer 404 until the next restart; down drops every connection
	// until then.
	missing     map[string]bool
	down        bool
	restartFile string
	restarts    int
	pullErr     string
	admin       []AdminRequest
}

// AdminRequest is a model management call the fake received (/api/pull or /api/create).
type AdminRequest struct {
	Path string
	// Body is the decoded JSON body; Raw the bytes as sent.
	Body map[string]any
	Raw  []byte
}

// CreatedModel is what /api/create made.
type CreatedModel struct {
	From       string
	System     string
	Template   string
	Parameters map[string]any
}

// canonical names a model with its tag (:latest when it has none).
func canonical(name string) string {
	if !strings.Contains(name, ":") {
		return name + ":latest"
	}
	return name
}

func (s *Server) hasModel(name string) bool {
	s.ol.mu.Lock()
	defer s.ol.mu.Unlock()
	return s.hasModelLocked(name)
}

func (s *Server) hasModelLocked(name string) bool {
	if s.ol.missing[canonical(name)] {
		return false
	}
	if !s.ol.restricted {
		return true
	}
	return slices.ContainsFunc(s.ol.names, func(n string) bool { return canonical(n) == canonical(name) })
}

func (s *Server) addModelLocked(name string) {
	if !slices.Contains(s.ol.names, canonical(name)) {
		s.ol.names = append(s.ol.names, canonical(name))
	}
}

// MissingUntilRestart makes models answer 404 model not found (and vanish from /api/tags)
// until the restart file appears (WithRestartFile).
func (s *Server) MissingUntilRestart(models ...string) {
	s.ol.mu.Lock()
	defer s.ol.mu.Unlock()
	if s.ol.missing == nil {
		s.ol.missing = map[string]bool{}
	}
	for _, m := range models {
		s.ol.missing[canonical(m)] = true
	}
}

// SetRestartFile is WithRestartFile for a server already running.
func (s *Server) SetRestartFile(path string) {
	s.ol.mu.Lock()
	defer s.ol.mu.Unlock()
	s.ol.restartFile = path
}

// RemoveModel deletes a model (as `ollama rm` does): a restart does not bring it back.
func (s *Server) RemoveModel(name string) {
	s.ol.mu.Lock()
	defer s.ol.mu.Unlock()
	s.ol.restricted = true
	s.ol.names = slices.DeleteFunc(s.ol.names, func(m string) bool { return canonical(m) == canonical(name) })
	delete(s.ol.created, canonical(name))
}

// DownUntilRestart makes the fake drop every connection without an answer (the client sees the
// connection closed, as when Ollama is not running) until the restart file appears.
func (s *Server) DownUntilRestart() {
	s.ol.mu.Lock()
	defer s.ol.mu.Unlock()
	s.ol.down = true
}

// Restarts counts the restarts seen (restart files consumed).
func (s *Server) Restarts() int {
	s.ol.mu.Lock()
	defer s.ol.mu.Unlock()
	return s.ol.restarts
}

// AdminRequests are the /api/pull and /api/create calls received, in order.
func (s *Server) AdminRequests() []AdminRequest {
	s.ol.mu.Lock()
	defer s.ol.mu.Unlock()
	return slices.Clone(s.ol.admin)
}

// Created is what /api/create made of model (false when it did not create it).
func (s *Server) Created(model string) (CreatedModel, bool) {
	s.ol.mu.Lock()
	defer s.ol.mu.Unlock()
	m, ok := s.ol.created[canonical(model)]
	return m, ok
}

// OllamaModels are the models /api/tags lists (only meaningful with WithModels).
func (s *Server) OllamaModels() []string {
	s.ol.mu.Lock()
	defer s.ol.mu.Unlock()
	out := slices.Clone(s.ol.names)
	sort.Strings(out)
	return out
}

// ollamaGate notices a restart (the restart file) before each request, and drops the
// connection while the fake is down.
func (s *Server) ollamaGate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.ol.mu.Lock()
		if f := s.ol.restartFile; f != "" {
			if err := os.Remove(f); err == nil {
				s.ol.restarts++
				s.ol.missing, s.ol.down = nil, false
			}
		}
		down := s.ol.down
		s.ol.mu.Unlock()
		if down {
			if hj, ok := w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					_ = conn.Close()
					return
				}
			}
			panic(http.ErrAbortHandler)
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) ollamaTags(w http.ResponseWriter, _ *http.Request) {
	s.ol.mu.Lock()
	names := slices.Clone(s.ol.names)
	missing := s.ol.missing
	s.ol.mu.Unlock()
	// api.ListResponse of api.ListModelResponse.
	models := []map[string]any{}
	for _, m := range names {
		if missing[canonical(m)] {
			continue
		}
		m = canonical(m)
		models = append(models, map[string]any{"name": m, "model": m, "modified_at": "2026-01-01T00:00:00Z",
			"size": 1 << 30, "digest": digest(m), "details": map[string]any{"format": "gguf", "family": "llama"}})
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": models})
}

func (s *Server) ollamaShow(w http.ResponseWriter, r *http.Request) {
	// api.ShowRequest.
	var in struct {
		Model string `json:"model"`
		Name  string `json:"name"`
	}
	if _, ok := readBody(w, r, s, &in); !ok {
		return
	}
	name := firstNonEmpty(in.Model, in.Name)
	if !s.hasModel(name) {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": fmt.Sprintf("model '%s' not found", name)})
		return
	}
	params, system, from := s.params, "", name
	s.ol.mu.Lock()
	if c, ok := s.ol.created[canonical(name)]; ok {
		params, system, from = formatParameters(c.Parameters), c.System, c.From
	}
	s.ol.mu.Unlock()
	// api.ShowResponse.
	writeJSON(w, http.StatusOK, map[string]any{"modelfile": "FROM " + from, "parameters": params, "system": system,
		"details":     map[string]any{"format": "gguf", "family": "llama"},
		"model_info":  map[string]any{"general.architecture": "llama", "llama.context_length": s.ctxLen},
		"modified_at": "2026-01-01T00:00:00Z"})
}

// formatParameters prints parameters as /api/show does: one "name value" a line, strings
// quoted, a list one line per value.
func formatParameters(p map[string]any) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		switch v := p[k].(type) {
		case []any:
			for _, e := range v {
				fmt.Fprintf(&b, "%-30s %q\n", k, fmt.Sprint(e))
			}
		case string:
			fmt.Fprintf(&b, "%-30s %q\n", k, v)
		default:
			fmt.Fprintf(&b, "%-30s %v\n", k, v)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// ollamaPull streams api.ProgressResponse lines as Ollama's pull does: the manifest, each
// layer's download progress, the digest check, the manifest write, success.
func (s *Server) ollamaPull(w http.ResponseWriter, r *http.Request) {
	// api.PullRequest.
	var in struct {
		Model  string `json:"model"`
		Name   string `json:"name"`
		Stream *bool  `json:"stream,omitempty"`
	}
	raw, ok := readBody(w, r, s, &in)
	if !ok {
		return
	}
	name := firstNonEmpty(in.Model, in.Name)
	s.recordAdmin(r.URL.Path, raw)
	if name == "" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "model is required"})
		return
	}
	s.ol.mu.Lock()
	pullErr := s.ol.pullErr
	s.ol.mu.Unlock()
	lines := []map[string]any{{"status": "pulling manifest"}}
	if pullErr == "" {
		d := digest(name)
		const total = 3 << 20
		for done := int64(0); done <= total; done += 1 << 20 {
			lines = append(lines, map[string]any{"status": "pulling " + d[7:19], "digest": d, "total": total, "completed": done})
		}
		lines = append(lines, map[string]any{"status": "verifying sha256 digest"}, map[string]any{"status": "writing manifest"},
			map[string]any{"status": "success"})
	} else {
		lines = append(lines, map[string]any{"error": pullErr})
	}
	s.streamLines(w, in.Stream, lines)
	if pullErr == "" {
		s.ol.mu.Lock()
		s.addModelLocked(name)
		s.ol.mu.Unlock()
	}
}

// ollamaCreate makes a model from another by name, as /api/create with "from" does (pulling
// the source first when it is missing), and streams its status lines.
func (s *Server) ollamaCreate(w http.ResponseWriter, r *http.Request) {
	// api.CreateRequest (the fields without files).
	var in struct {
		Model      string            `json:"model"`
		Name       string            `json:"name"`
		From       string            `json:"from"`
		Files      map[string]string `json:"files"`
		Template   string            `json:"template"`
		System     string            `json:"system"`
		Parameters map[string]any    `json:"parameters"`
		Stream     *bool             `json:"stream,omitempty"`
	}
	raw, ok := readBody(w, r, s, &in)
	if !ok {
		return
	}
	s.recordAdmin(r.URL.Path, raw)
	name := firstNonEmpty(in.Model, in.Name)
	switch {
	case name == "":
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "model is required"})
		return
	case in.From == "" && len(in.Files) == 0:
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "neither 'from' or 'files' was specified"})
		return
	case len(in.Files) > 0:
		s.problem("api/create: files were sent; the fake creates models from a model name only")
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "files are not supported by the fake"})
		return
	}
	for k := range in.Parameters {
		if !knownParameter(k) {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": fmt.Sprintf("unknown parameter '%s'", k)})
			return
		}
	}
	lines := []map[string]any{}
	s.ol.mu.Lock()
	if !s.hasModelLocked(in.From) {
		lines = append(lines, map[string]any{"status": "pulling manifest"})
		s.addModelLocked(in.From)
	}
	lines = append(lines, map[string]any{"status": "using existing layer " + digest(in.From)})
	if in.System != "" || len(in.Parameters) > 0 || in.Template != "" {
		lines = append(lines, map[string]any{"status": "creating new layer " + digest(name)})
	}
	lines = append(lines, map[string]any{"status": "writing manifest"}, map[string]any{"status": "success"})
	if s.ol.created == nil {
		s.ol.created = map[string]CreatedModel{}
	}
	s.ol.created[canonical(name)] = CreatedModel{From: in.From, System: in.System, Template: in.Template, Parameters: in.Parameters}
	s.addModelLocked(name)
	delete(s.ol.missing, canonical(name))
	s.ol.mu.Unlock()
	s.streamLines(w, in.Stream, lines)
}

// knownParameter: the names of api.Options and api.Runner.
func knownParameter(k string) bool {
	switch k {
	case "num_ctx", "num_batch", "num_gpu", "main_gpu", "use_mmap", "num_thread", "num_keep", "seed", "num_predict",
		"top_k", "top_p", "min_p", "typical_p", "repeat_last_n", "temperature", "repeat_penalty", "presence_penalty",
		"frequency_penalty", "stop":
		return true
	}
	return false
}

func (s *Server) recordAdmin(path string, raw []byte) {
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	s.ol.mu.Lock()
	defer s.ol.mu.Unlock()
	s.ol.admin = append(s.ol.admin, AdminRequest{Path: path, Body: body, Raw: raw})
}

// streamLines writes lines as Ollama's NDJSON stream (or, with stream false, the last line
// alone); an error line ends the stream (before anything else, as a status 500 answer).
func (s *Server) streamLines(w http.ResponseWriter, stream *bool, lines []map[string]any) {
	if stream != nil && !*stream {
		last := lines[len(lines)-1]
		status := http.StatusOK
		if _, ok := last["error"]; ok {
			status = http.StatusInternalServerError
		}
		writeJSON(w, status, last)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	for _, l := range lines {
		_ = enc.Encode(l)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
}

// digest is a stable sha256 digest for a name, in Ollama's "sha256:<hex>" form.
func digest(name string) string {
	h := sha256.Sum256([]byte(name))
	return "sha256:" + hex.EncodeToString(h[:])
}
