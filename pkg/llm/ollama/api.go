package ollama

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/outbound"
)

// SetupCommand is what installs the suite's local models on an Ollama server (Modelfiles under
// deploy/ollama); messages about a missing model name it.
const SetupCommand = "picoclaw models setup"

// API is the model management part of Ollama's API the suite uses: /api/tags, /api/show,
// /api/pull and /api/create, with the request and response shapes of
// github.com/ollama/ollama/api (ListResponse, ShowRequest/ShowResponse, PullRequest,
// CreateRequest, ProgressResponse).
type API struct {
	base string
	hc   *http.Client
}

// NewAPI is the API of the server at baseURL; hc nil is a client bounded only by each call's
// context (a pull can take many minutes).
func NewAPI(baseURL string, hc *http.Client) *API {
	if hc == nil {
		hc = outbound.Client(0)
	}
	return &API{base: strings.TrimRight(baseURL, "/"), hc: hc}
}

// BaseURL is the server's base URL.
func (a *API) BaseURL() string { return a.base }

// ListedModel is one model of /api/tags (api.ListModelResponse).
type ListedModel struct {
	Name   string `json:"name"`
	Model  string `json:"model"`
	Size   int64  `json:"size"`
	Digest string `json:"digest"`
}

// List is the models the server has. A server that cannot be reached is llm.ErrUnreachable
// (and llm.ErrUnavailable).
func (a *API) List(ctx context.Context) ([]ListedModel, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+"/api/tags", nil)
	if err != nil {
		return nil, err
	}
	var out struct {
		Models []ListedModel `json:"models"`
	}
	if err := llm.DoJSON(a.hc, hreq, &out, ollamaError); err != nil {
		return nil, a.transportError("/api/tags", err)
	}
	return out.Models, nil
}

// Has reports whether models holds name (a name without a tag means :latest).
func Has(models []ListedModel, name string) bool {
	for _, m := range models {
		if sameModel(m.Name, name) || sameModel(m.Model, name) {
			return true
		}
	}
	return false
}

// ModelDetails is what /api/show says about a model that the suite checks.
type ModelDetails struct {
	// ContextLength is the trained context length (model_info "<arch>.context_length").
	ContextLength int
	// NumCtx is the num_ctx the model file sets (0 when unset).
	NumCtx int
	// Parameters are the model file's parameters, one "name value" a line.
	Parameters string
	System     string
}

// Show describes a model; one the server does not have is llm.ErrModelUnavailable.
func (a *API) Show(ctx context.Context, model string) (ModelDetails, error) {
	var out struct {
		Parameters string         `json:"parameters"`
		System     string         `json:"system"`
		ModelInfo  map[string]any `json:"model_info"`
	}
	err := llm.PostJSON(ctx, a.hc, a.base+"/api/show", nil, map[string]string{"model": model}, &out, ollamaError)
	if err != nil {
		if llm.StatusCode(err) == http.StatusNotFound {
			return ModelDetails{}, fmt.Errorf("ollama /api/show %s: %w: %w", model, llm.ErrModelUnavailable, err)
		}
		return ModelDetails{}, a.transportError("/api/show", err)
	}
	d := ModelDetails{Parameters: out.Parameters, System: out.System}
	for k, v := range out.ModelInfo {
		if strings.HasSuffix(k, ".context_length") {
			if f, ok := v.(float64); ok {
				d.ContextLength = int(f)
			}
		}
	}
	for _, line := range strings.Split(out.Parameters, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "num_ctx" {
			d.NumCtx, _ = strconv.Atoi(f[1])
		}
	}
	return d, nil
}

// Progress is one line of a streamed pull or create (api.ProgressResponse).
type Progress struct {
	Status    string `json:"status"`
	Digest    string `json:"digest,omitempty"`
	Total     int64  `json:"total,omitempty"`
	Completed int64  `json:"completed,omitempty"`
}

// Pull downloads model from the registry, reporting each progress line to fn (nil: none).
func (a *API) Pull(ctx context.Context, model string, fn func(Progress)) error {
	return a.stream(ctx, "/api/pull", map[string]any{"model": model, "stream": true}, fn)
}

// CreateMessage is a message a created model starts every conversation with (api.Message).
type CreateMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// CreateRequest is api.CreateRequest: the fields a Modelfile without files sets (the source
// model by name, parameters, system prompt, template, messages, licence).
type CreateRequest struct {
	Model      string          `json:"model"`
	From       string          `json:"from,omitempty"`
	Template   string          `json:"template,omitempty"`
	License    any             `json:"license,omitempty"`
	System     string          `json:"system,omitempty"`
	Parameters map[string]any  `json:"parameters,omitempty"`
	Messages   []CreateMessage `json:"messages,omitempty"`
	Stream     *bool           `json:"stream,omitempty"`
}

// Create creates req.Model on the server, reporting each progress line to fn (nil: none).
func (a *API) Create(ctx context.Context, req CreateRequest, fn func(Progress)) error {
	stream := true
	req.Stream = &stream
	return a.stream(ctx, "/api/create", req, fn)
}

// stream posts in and reads Ollama's NDJSON progress stream until its "success" line. An error
// before the stream starts comes as a status with {"error"}; one during it as an {"error"} line.
func (a *API) stream(ctx context.Context, path string, in any, fn func(Progress)) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+path, bytes.NewReader(data))
	if err != nil {
		return err
	}
	hreq.Header.Set("Content-Type", "application/json")
	res, err := a.hc.Do(hreq)
	if err != nil {
		return a.transportError(path, err)
	}
	defer res.Body.Close()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		raw, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
		msg := ollamaError(raw)
		if msg == "" {
			msg = strings.TrimSpace(string(raw))
		}
		return fmt.Errorf("ollama %s: %w", path, llm.HTTPStatusError(res.StatusCode, res.Header, msg))
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	last := ""
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var p struct {
			Progress
			Error string `json:"error"`
		}
		if err := json.Unmarshal(line, &p); err != nil {
			return llm.BadResponse("ollama %s: %v", path, err)
		}
		if p.Error != "" {
			return fmt.Errorf("ollama %s: %s", path, p.Error)
		}
		last = p.Status
		if fn != nil {
			fn(p.Progress)
		}
	}
	if err := sc.Err(); err != nil {
		return a.transportError(path, err)
	}
	if last != "success" {
		return fmt.Errorf("ollama %s: the stream ended without success (last status %q)", path, last)
	}
	return nil
}

// transportError marks a failure to reach the server as llm.ErrUnreachable, naming the server.
func (a *API) transportError(path string, err error) error {
	if llm.StatusCode(err) != 0 || errors.Is(err, llm.ErrBadResponse) {
		return fmt.Errorf("ollama %s: %w", path, err)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("ollama %s at %s: %w", path, a.base, err)
	}
	return fmt.Errorf("ollama at %s cannot be reached (is it running? `ollama serve`): %w: %w: %w", a.base, llm.ErrUnavailable, llm.ErrUnreachable, err)
}
