package domain

import (
	"strconv"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
)

// resetModes are the git reset modes an operation may ask for in metadata "mode".
func resetMode(m string) bool {
	switch m {
	case "soft", "mixed", "hard", "keep", "merge":
		return true
	}
	return false
}

// GitArgs builds the argument vector (without "git") for a git operation. Paths go after
// "--"; refs and remotes are validated never to start with "-", so nothing from the patch can
// be read as an option.
func GitArgs(op patch.Operation) ([]string, error) {
	targets, err := gitTargets(op.Target)
	if err != nil {
		return nil, err
	}
	switch op.Action {
	case patch.ActionGitAdd:
		if len(targets) == 0 {
			return nil, Fail(ErrInvalid, CodeGitAddPaths)
		}
		paths, err := cleanAll(targets)
		if err != nil {
			return nil, err
		}
		return append([]string{"add", "--"}, paths...), nil
	case patch.ActionGitCommit:
		msg := strings.TrimSpace(op.Content)
		if msg == "" {
			msg = strings.TrimSpace(op.Metadata["message"])
		}
		if msg == "" {
			return nil, Fail(ErrInvalid, CodeGitCommitMessage)
		}
		return []string{"commit", "-m", msg}, nil
	case patch.ActionGitReset:
		args := []string{"reset"}
		if m := op.Metadata["mode"]; m != "" {
			if !resetMode(m) {
				return nil, Fail(ErrInvalid, CodeGitResetMode, strconv.Quote(m))
			}
			args = append(args, "--"+m)
		}
		if ref := op.Metadata["ref"]; ref != "" {
			if err := refName(ref); err != nil {
				return nil, err
			}
			args = append(args, ref)
		}
		// A target may be a commit ("HEAD~1") or a path; git tells them apart, and the
		// validation keeps both inside the repository and away from options.
		revs, err := cleanAll(targets)
		if err != nil {
			return nil, err
		}
		return append(args, revs...), nil
	case patch.ActionGitCheckout:
		args := []string{"checkout"}
		if op.Metadata["force"] == "true" {
			args = append(args, "--force")
		}
		name := op.Metadata["branch"]
		if name == "" && len(targets) == 1 {
			name = targets[0]
		}
		if name == "" || len(targets) > 1 {
			return nil, Fail(ErrInvalid, CodeGitCheckoutOne)
		}
		if op.Metadata["new_branch"] == "true" {
			if err := refName(name); err != nil {
				return nil, err
			}
			return append(args, "-b", name), nil
		}
		c, err := cleanAll([]string{name})
		if err != nil {
			return nil, err
		}
		return append(args, c...), nil
	case patch.ActionGitPush:
		// Exactly the push approval showed: the remote (name or URL) and branch of the
		// operation, forced only when it says so. Anything else about it is refused.
		push, err := patch.PushOf(op)
		if err != nil {
			return nil, FailWith(ErrInvalid, err, CodeGitPushInvalid)
		}
		return push.Args(), nil
	default:
		return nil, Fail(ErrInvalid, CodeUnknownAction, "git_operation", strconv.Quote(op.Action))
	}
}

// gitTargets splits a target into arguments, dropping a leading "git <action>" that some
// patches repeat.
func gitTargets(target string) ([]string, error) {
	if strings.IndexByte(target, 0) >= 0 {
		return nil, Fail(ErrInvalid, CodeGitTargetNUL)
	}
	f := strings.Fields(target)
	if len(f) > 0 && f[0] == "git" {
		f = f[1:]
		if len(f) > 0 {
			f = f[1:]
		}
	}
	return f, nil
}

func cleanAll(paths []string) ([]string, error) {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if p == "." || p == "-A" || p == "--all" {
			out = append(out, ".")
			continue
		}
		if strings.HasPrefix(p, "-") {
			return nil, Fail(ErrInvalid, CodeGitOption, strconv.Quote(p))
		}
		c, err := CleanPath(p)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// refName accepts remote, branch and ref names, refusing anything that could be an option or
// a path outside the repository.
func refName(s string) error {
	if s == "" || strings.HasPrefix(s, "-") || strings.Contains(s, "..") || strings.ContainsAny(s, " \t\n\x00\\:?*[") {
		return Fail(ErrInvalid, CodeGitRef, strconv.Quote(s))
	}
	return nil
}
