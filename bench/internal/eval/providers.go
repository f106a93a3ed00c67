package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
)

// Provider is one model provider, run as coder-order's order1.
type Provider struct {
	Name    string `json:"name"`
	Model   string `json:"model"`
	BaseURL string `json:"base_url,omitempty"`
	// KeyEnv names the environment variable holding the API key; Key is its value (never
	// reported). Both are empty for Ollama.
	KeyEnv string `json:"-"`
	Key    string `json:"-"`
	// Price is the model's price when coder-order's table does not have it.
	Price *llm.Price `json:"price,omitempty"`
	// Skip says why the provider is not run ("" = it is).
	Skip string `json:"skip,omitempty"`
}

// DefaultModels are the providers in report order with the model each is asked by default:
// coder-order's default models for the cloud providers, a coding model for Ollama.
var DefaultModels = []struct{ Provider, Model string }{
	{llm.ProviderOpenAI, "gpt-4o"},
	{llm.ProviderDeepSeek, "deepseek-chat"},
	{llm.ProviderAnthropic, "claude-sonnet-4-5"},
	{llm.ProviderOllama, "qwen2.5-coder:7b"},
}

// DetectOptions say where to look for the providers.
type DetectOptions struct {
	// LookupEnv finds API keys and OLLAMA_HOST (os.LookupEnv in the command).
	LookupEnv func(string) (string, bool)
	// Models and BaseURLs override a provider's default model and base URL; Ollama's base URL
	// is otherwise OLLAMA_HOST, else the local default.
	Models, BaseURLs map[string]string
	// Prices are added to coder-order's price table, by model.
	Prices map[string]llm.Price
	// Only, when set, runs just these providers.
	Only []string
	// Client asks Ollama which models it has (default: a client with a 5 s timeout).
	Client *http.Client
}

// Detect lists every provider with what the eval needs to run it, or why it is skipped: a
// cloud provider without its API key, an Ollama that does not answer or lacks the model.
func Detect(ctx context.Context, o DetectOptions) []Provider {
	lookup := o.LookupEnv
	if lookup == nil {
		lookup = func(string) (string, bool) { return "", false }
	}
	var out []Provider
	for _, d := range DefaultModels {
		p := Provider{Name: d.Provider, Model: d.Model, BaseURL: o.BaseURLs[d.Provider]}
		if m := o.Models[d.Provider]; m != "" {
			p.Model = m
		}
		if price, ok := o.Prices[p.Model]; ok {
			p.Price = &price
		}
		switch {
		case len(o.Only) > 0 && !slices.Contains(o.Only, p.Name):
			p.Skip = "not selected"
		case p.Name == llm.ProviderOllama:
			if p.BaseURL == "" {
				host, _ := lookup("OLLAMA_HOST")
				p.BaseURL = OllamaURL(host)
			}
			p.Skip = ollamaHas(ctx, o.Client, p.BaseURL, p.Model)
		default:
			p.KeyEnv = llm.Config{Provider: p.Name}.WithDefaults().APIKeyEnv
			if key, _ := lookup(p.KeyEnv); strings.TrimSpace(key) != "" {
				p.Key = key
			} else {
				p.Skip = "no key (" + p.KeyEnv + " not set)"
			}
		}
		out = append(out, p)
	}
	return out
}

// OllamaURL is the base URL for an OLLAMA_HOST value (host, host:port or a URL; a listen-all
// address means this machine), or the local default when it is empty.
func OllamaURL(host string) string {
	host = strings.TrimSpace(host)
	if host == "" {
		return llm.DefaultOllamaURL
	}
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	u, err := url.Parse(host)
	if err != nil || u.Host == "" {
		return llm.DefaultOllamaURL
	}
	h, port := u.Hostname(), u.Port()
	if h == "" || h == "0.0.0.0" || h == "::" {
		h = "127.0.0.1"
	}
	if port == "" {
		port = "11434"
	}
	u.Host = net.JoinHostPort(h, port)
	return strings.TrimSuffix(u.String(), "/")
}

// ollamaHas returns "" when the Ollama at base lists model, else why the provider is skipped.
func ollamaHas(ctx context.Context, c *http.Client, base, model string) string {
	if c == nil {
		c = &http.Client{Timeout: 5 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/tags", nil)
	if err != nil {
		return "not reachable at " + base + ": " + err.Error()
	}
	res, err := c.Do(req)
	if err != nil {
		return "not reachable at " + base
	}
	defer res.Body.Close()
	var tags struct {
		Models []struct {
			Name string `json:"name"`
		} `json:"models"`
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Sprintf("not reachable at %s: %s", base, res.Status)
	}
	if err := json.NewDecoder(res.Body).Decode(&tags); err != nil {
		return fmt.Sprintf("not reachable at %s: %v", base, err)
	}
	for _, m := range tags.Models {
		if m.Name == model || m.Name == model+":latest" {
			return ""
		}
	}
	return fmt.Sprintf("model %s not installed at %s (ollama pull %s)", model, base, model)
}
