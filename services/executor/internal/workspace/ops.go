package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/domain"
)

// Touched lists the clean workspace paths a file operation may change, for the rollback
// snapshot. Invalid paths are left out: the operation itself will be refused.
func Touched(op patch.Operation) []string {
	if op.Type != patch.TypeFileEdit {
		return nil
	}
	var out []string
	add := func(p string) {
		if c, err := domain.CleanPath(p); err == nil {
			out = append(out, c)
		}
	}
	add(op.Target)
	switch op.Action {
	case patch.ActionRename:
		add(op.Metadata["to"])
	case patch.ActionPatch:
		if files, err := parseDiff(op.Target, op.Content); err == nil {
			for _, f := range files {
				for _, n := range []string{f.OldName, f.NewName} {
					if n != "" {
						add(n)
					}
				}
			}
		}
	}
	sort.Strings(out)
	return dedupe(out)
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// Apply runs one file operation against st and returns a short description of what it did.
func Apply(st Store, op patch.Operation) (string, error) {
	target, err := domain.CleanPath(op.Target)
	if err != nil {
		return "", err
	}
	switch op.Action {
	case patch.ActionCreate, patch.ActionUpdate:
		_, mode, existed, err := st.Read(target)
		if err != nil {
			return "", err
		}
		if err := st.Write(target, []byte(op.Content), mode); err != nil {
			return "", err
		}
		verb := "updated"
		if !existed {
			verb = "created"
		}
		return fmt.Sprintf("%s %s (%d bytes)", verb, target, len(op.Content)), nil
	case patch.ActionAppend:
		data, mode, _, err := st.Read(target)
		if err != nil {
			return "", err
		}
		if err := st.Write(target, append(data, op.Content...), mode); err != nil {
			return "", err
		}
		return fmt.Sprintf("appended %d bytes to %s", len(op.Content), target), nil
	case patch.ActionDelete:
		if err := st.Remove(target); err != nil {
			return "", err
		}
		return "deleted " + target, nil
	case patch.ActionRename:
		to, err := domain.CleanPath(op.Metadata["to"])
		if err != nil {
			return "", fmt.Errorf("rename destination: %w", err)
		}
		if err := st.Rename(target, to); err != nil {
			return "", err
		}
		return fmt.Sprintf("renamed %s to %s", target, to), nil
	case patch.ActionPatch:
		return applyDiff(st, target, op.Content)
	default:
		return "", domain.Fail(domain.ErrInvalid, domain.CodeUnknownAction, "file_edit", strconv.Quote(op.Action))
	}
}

// parseDiff parses a unified or git diff. A bare hunk list (no file header) is taken to be
// about target.
func parseDiff(target, content string) ([]*gitdiff.File, error) {
	if !strings.Contains(content, "--- ") && !strings.HasPrefix(content, "diff --git ") {
		content = fmt.Sprintf("--- a/%s\n+++ b/%s\n%s", target, target, content)
	}
	files, _, err := gitdiff.Parse(strings.NewReader(content))
	if err != nil {
		return nil, domain.FailWith(domain.ErrInvalid, err, domain.CodeDiffUnreadable)
	}
	if len(files) == 0 {
		return nil, domain.Fail(domain.ErrInvalid, domain.CodeDiffEmpty)
	}
	// The library strips a/ and b/ only from git headers; traditional ---/+++ headers carry
	// them too (patch -p1), the shape the shared parser renders. For those the library keeps
	// one of the two names for both sides.
	if !strings.Contains(content, "diff --git ") {
		for _, f := range files {
			f.OldName, f.NewName = stripP1(f.OldName), stripP1(f.NewName)
		}
	}
	return files, nil
}

func applyDiff(st Store, target, content string) (string, error) {
	files, err := parseDiff(target, content)
	if err != nil {
		return "", err
	}
	// Validate every name first so nothing is written when any of them is hostile.
	type plan struct {
		f        *gitdiff.File
		old, new string
	}
	var plans []plan
	named := false
	for _, f := range files {
		var p plan
		p.f = f
		if !f.IsNew {
			if p.old, err = domain.CleanPath(f.OldName); err != nil {
				return "", fmt.Errorf("diff source: %w", err)
			}
		}
		if !f.IsDelete {
			if p.new, err = domain.CleanPath(f.NewName); err != nil {
				return "", fmt.Errorf("diff destination: %w", err)
			}
		}
		if p.old == target || p.new == target {
			named = true
		}
		plans = append(plans, p)
	}
	if !named {
		return "", domain.Fail(domain.ErrInvalid, domain.CodeDiffMissesTarget, target)
	}
	var done []string
	for _, p := range plans {
		var src []byte
		var mode fs.FileMode
		if p.f.IsNew {
			if _, _, exists, err := st.Read(p.new); err != nil {
				return "", err
			} else if exists {
				return "", domain.Fail(domain.ErrConflict, domain.CodeDiffCreatesExisting, p.new)
			}
		} else {
			var exists bool
			src, mode, exists, err = st.Read(p.old)
			if err != nil {
				return "", err
			}
			if !exists {
				return "", domain.Fail(domain.ErrNotFound, domain.CodeDiffChangesMissing, p.old)
			}
		}
		var out bytes.Buffer
		if err := gitdiff.Apply(&out, bytes.NewReader(src), p.f); err != nil {
			var conflict *gitdiff.Conflict
			if errors.As(err, &conflict) {
				return "", domain.FailWith(domain.ErrConflict, err, domain.CodeDiffConflict, p.old)
			}
			return "", domain.FailWith(domain.ErrInvalid, err, domain.CodeDiffFailed, p.old)
		}
		if p.f.NewMode != 0 && p.f.NewMode&0o111 != 0 {
			mode = 0o755
		}
		switch {
		case p.f.IsDelete:
			if err := st.Remove(p.old); err != nil {
				return "", err
			}
			done = append(done, "deleted "+p.old)
		case p.f.IsRename && p.old != p.new:
			if err := st.Rename(p.old, p.new); err != nil {
				return "", err
			}
			if err := st.Write(p.new, out.Bytes(), mode); err != nil {
				return "", err
			}
			done = append(done, fmt.Sprintf("renamed %s to %s", p.old, p.new))
		default:
			if err := st.Write(p.new, out.Bytes(), mode); err != nil {
				return "", err
			}
			done = append(done, "patched "+p.new)
		}
	}
	return strings.Join(done, ", "), nil
}

func stripP1(name string) string {
	if strings.HasPrefix(name, "a/") || strings.HasPrefix(name, "b/") {
		return name[2:]
	}
	return name
}
