package ollama

import (
	"fmt"
	"strconv"
	"strings"
)

// Modelfile is a parsed Ollama Modelfile of the kind the suite ships (deploy/ollama): a source
// model by name, parameters, a system prompt, and optionally a template, messages and a licence.
// Instructions that need local files (FROM a path, ADAPTER) are refused: the server cannot read
// them and the create API would need the blobs uploaded first.
type Modelfile struct {
	From       string
	Parameters map[string]any
	System     string
	Template   string
	Messages   []CreateMessage
	License    []string
}

// parameterKinds are the PARAMETER names Ollama knows (api.Options and api.Runner) with the
// JSON type each takes; api.FormatParams refuses any other name.
var parameterKinds = map[string]byte{
	"num_ctx": 'i', "num_batch": 'i', "num_gpu": 'i', "main_gpu": 'i', "num_thread": 'i', "use_mmap": 'b',
	"num_keep": 'i', "seed": 'i', "num_predict": 'i', "top_k": 'i', "repeat_last_n": 'i',
	"top_p": 'f', "min_p": 'f', "typical_p": 'f', "temperature": 'f', "repeat_penalty": 'f',
	"presence_penalty": 'f', "frequency_penalty": 'f', "stop": 's',
}

// ParseModelfile parses text; errors name the line.
func ParseModelfile(text string) (Modelfile, error) {
	mf := Modelfile{Parameters: map[string]any{}}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		n := i + 1
		line := strings.TrimSpace(lines[i])
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		word, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		// A value in triple quotes may span lines.
		if strings.HasPrefix(rest, `"""`) {
			body := strings.TrimPrefix(rest, `"""`)
			for !strings.Contains(body, `"""`) {
				i++
				if i >= len(lines) {
					return Modelfile{}, fmt.Errorf("modelfile line %d: unterminated \"\"\"", n)
				}
				body += "\n" + lines[i]
			}
			end := strings.Index(body, `"""`)
			if tail := strings.TrimSpace(body[end+3:]); tail != "" {
				return Modelfile{}, fmt.Errorf("modelfile line %d: text after the closing \"\"\": %q", i+1, tail)
			}
			rest = body[:end]
		} else if len(rest) >= 2 && strings.HasPrefix(rest, `"`) && strings.HasSuffix(rest, `"`) {
			rest = rest[1 : len(rest)-1]
		}
		switch strings.ToUpper(word) {
		case "FROM":
			if rest == "" {
				return Modelfile{}, fmt.Errorf("modelfile line %d: FROM needs a model name", n)
			}
			if strings.HasPrefix(rest, ".") || strings.HasPrefix(rest, "/") || strings.HasPrefix(rest, "~") {
				return Modelfile{}, fmt.Errorf("modelfile line %d: FROM %s is a file; only a model name can be created over the API", n, rest)
			}
			mf.From = rest
		case "PARAMETER":
			name, value, ok := strings.Cut(rest, " ")
			name, value = strings.ToLower(strings.TrimSpace(name)), strings.TrimSpace(value)
			if !ok || value == "" {
				return Modelfile{}, fmt.Errorf("modelfile line %d: PARAMETER needs a name and a value", n)
			}
			if v, err := strconv.Unquote(value); err == nil && strings.HasPrefix(value, `"`) {
				value = v
			}
			if err := mf.addParameter(name, value); err != nil {
				return Modelfile{}, fmt.Errorf("modelfile line %d: %w", n, err)
			}
		case "SYSTEM":
			mf.System = rest
		case "TEMPLATE":
			mf.Template = rest
		case "LICENSE":
			mf.License = append(mf.License, rest)
		case "MESSAGE":
			role, content, ok := strings.Cut(rest, " ")
			role = strings.ToLower(role)
			if !ok || (role != "system" && role != "user" && role != "assistant") {
				return Modelfile{}, fmt.Errorf("modelfile line %d: MESSAGE needs a role (system, user or assistant) and a text", n)
			}
			mf.Messages = append(mf.Messages, CreateMessage{Role: role, Content: strings.TrimSpace(content)})
		default:
			return Modelfile{}, fmt.Errorf("modelfile line %d: instruction %q is not supported (FROM, PARAMETER, SYSTEM, TEMPLATE, MESSAGE, LICENSE)", n, word)
		}
	}
	if mf.From == "" {
		return Modelfile{}, fmt.Errorf("modelfile: no FROM line")
	}
	return mf, nil
}

func (mf *Modelfile) addParameter(name, value string) error {
	kind, ok := parameterKinds[name]
	if !ok {
		return fmt.Errorf("unknown parameter %q", name)
	}
	switch kind {
	case 'i':
		v, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return fmt.Errorf("parameter %s: %q is not an integer", name, value)
		}
		mf.Parameters[name] = v
	case 'f':
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return fmt.Errorf("parameter %s: %q is not a number", name, value)
		}
		mf.Parameters[name] = v
	case 'b':
		v, err := strconv.ParseBool(value)
		if err != nil {
			return fmt.Errorf("parameter %s: %q is not true or false", name, value)
		}
		mf.Parameters[name] = v
	default:
		stops, _ := mf.Parameters[name].([]string)
		mf.Parameters[name] = append(stops, value)
	}
	return nil
}

// NumCtx is the num_ctx the Modelfile sets (0 when none).
func (mf Modelfile) NumCtx() int {
	v, _ := mf.Parameters["num_ctx"].(int64)
	return int(v)
}

// CreateRequest is the /api/create request that makes model from this Modelfile; from, when
// set, replaces the FROM line's source model.
func (mf Modelfile) CreateRequest(model, from string) CreateRequest {
	req := CreateRequest{Model: model, From: mf.From, System: mf.System, Template: mf.Template, Messages: mf.Messages}
	if from != "" {
		req.From = from
	}
	if len(mf.Parameters) > 0 {
		req.Parameters = mf.Parameters
	}
	switch len(mf.License) {
	case 0:
	case 1:
		req.License = mf.License[0]
	default:
		req.License = mf.License
	}
	return req
}
