package patch

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
)

// MetaBaseSHA256 is the metadata key of a file operation that names the content the patch was
// written against: the hex sha256 of the file as the coder saw it, or BaseAbsent when it did
// not exist. It is part of the canonical hash, so an approval covers the base too, and the
// executor refuses to apply the operation when the file no longer has that content.
const MetaBaseSHA256 = "base_sha256"

// BaseAbsent is the base of a file that did not exist when the patch was written.
const BaseAbsent = "none"

var baseValue = regexp.MustCompile(`^(none|[0-9a-f]{64})$`)

// ValidBase reports whether v is a base value: BaseAbsent or a lower-case hex sha256.
func ValidBase(v string) bool { return baseValue.MatchString(v) }

// Bases maps each file operation's source path to its base, for the operations that carry one.
func Bases(p *Patch) map[string]string {
	out := map[string]string{}
	for _, op := range p.Operations {
		if b, ok := op.Metadata[MetaBaseSHA256]; ok && op.Type == TypeFileEdit {
			if _, seen := out[op.Target]; !seen {
				out[op.Target] = b
			}
		}
	}
	return out
}

// jsonCommand is one command of the JSON patch format.
type jsonCommand struct {
	Type     Type              `json:"type"`
	Action   string            `json:"action"`
	Target   string            `json:"target"`
	Content  string            `json:"content,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// BindBase rewrites patch text as the JSON command list whose file operations carry
// MetaBaseSHA256 from base (keyed by the operation's target). Every operation keeps its type,
// action, target, content and other metadata; the rewrite is checked by parsing it back.
// Operations whose target has no entry in base are left unbound. It returns the text
// unchanged when nothing is bound.
func BindBase(text string, base map[string]string, opts Options) (string, error) {
	return rewrite(text, opts, func(op Operation, c *jsonCommand) (bool, error) {
		b, ok := base[op.Target]
		if !ok || op.Type != TypeFileEdit {
			return false, nil
		}
		if !ValidBase(b) {
			return false, fmt.Errorf("%w: base of %s is %q, want a sha256 or %q", ErrInvalid, op.Target, b, BaseAbsent)
		}
		if c.Metadata == nil {
			c.Metadata = map[string]string{}
		}
		c.Metadata[MetaBaseSHA256] = b
		return true, nil
	})
}

// DiffUpdates rewrites every whole-file update of a file whose current content is given
// (keyed by target) as the unified diff from that content to the new one, so the change is
// shown — and counted — with the lines it removes, and applies only to that content. Updates
// of files not in current, and updates that change nothing, are kept as they are. It returns
// the text unchanged when nothing is rewritten.
func DiffUpdates(text string, current map[string]string, opts Options) (string, error) {
	return rewrite(text, opts, func(op Operation, c *jsonCommand) (bool, error) {
		old, ok := current[op.Target]
		if !ok || op.Type != TypeFileEdit || op.Action != ActionUpdate {
			return false, nil
		}
		d := UnifiedDiff(op.Target, old, op.Content)
		if d == "" {
			return false, nil
		}
		c.Action, c.Content = ActionPatch, d
		return true, nil
	})
}

// rewrite re-encodes patch text as the JSON command list after edit has had its say on each
// operation, and checks the result by parsing it back: same operations in the same order, each
// unchanged except where edit changed it (the base, or an update turned into its diff). It
// returns the text unchanged when edit changed nothing.
func rewrite(text string, opts Options, edit func(op Operation, c *jsonCommand) (bool, error)) (string, error) {
	p, err := Parse(text, opts)
	if err != nil {
		return "", err
	}
	if len(p.Unknown) > 0 {
		return "", fmt.Errorf("%w: the patch has blocks the parser did not understand; it cannot be rewritten", ErrInvalid)
	}
	cmds := make([]jsonCommand, len(p.Operations))
	changed := 0
	for i, op := range p.Operations {
		c := jsonCommand{Type: op.Type, Action: op.Action, Target: op.Target, Content: op.Content, Metadata: maps.Clone(op.Metadata)}
		did, err := edit(op, &c)
		if err != nil {
			return "", err
		}
		if did {
			changed++
		}
		cmds[i] = c
	}
	if changed == 0 {
		return text, nil
	}
	out, err := json.MarshalIndent(cmds, "", "  ")
	if err != nil {
		return "", fmt.Errorf("%w: encode: %v", ErrInvalid, err)
	}
	back, err := Parse(string(out), opts)
	if err != nil {
		return "", fmt.Errorf("%w: the rewritten patch does not parse: %v", ErrInvalid, err)
	}
	if len(back.Operations) != len(p.Operations) {
		return "", fmt.Errorf("%w: the rewritten patch has %d operations, the original %d", ErrInvalid, len(back.Operations), len(p.Operations))
	}
	for i, op := range back.Operations {
		want := cmds[i]
		if op.Type != want.Type || op.Action != want.Action || op.Target != p.Operations[i].Target || op.Content != want.Content ||
			!maps.Equal(op.Metadata, want.Metadata) {
			return "", fmt.Errorf("%w: operation %d changes when rewritten", ErrInvalid, i+1)
		}
	}
	return string(out), nil
}
