package patch

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// Force modes of a git push (metadata "force").
const (
	// ForceOverwrite is `git push --force`.
	ForceOverwrite = "true"
	// ForceWithLease is `git push --force-with-lease`: overwrite only what the last fetch saw.
	ForceWithLease = "lease"
)

// MetaRemote may name the remote of a push in a JSON command; the parser moves it to Target.
const MetaRemote = "remote"

// Push is a git push as approved: the exact remote URL, the branch pushed to the branch of the
// same name, and whether it is forced. Approval shows Command() and the executor runs Args():
// the same words. A remote name ("origin") is refused: its URL would come from the
// workspace's git config, which is not what the approver saw.
type Push struct {
	// Remote is the URL (https://, ssh://, git://, user@host:path).
	Remote string
	Branch string
	// Force is "", ForceOverwrite or ForceWithLease.
	Force       string
	SetUpstream bool
}

// Forced reports whether the push may overwrite remote history.
func (p Push) Forced() bool { return p.Force != "" }

// Args is the git argument vector (without "git"). The refspec names the branch on both sides
// in full, so neither a tag of the same name nor push.default changes what is pushed.
func (p Push) Args() []string {
	args := []string{"push"}
	switch p.Force {
	case ForceOverwrite:
		args = append(args, "--force")
	case ForceWithLease:
		args = append(args, "--force-with-lease")
	}
	if p.SetUpstream {
		args = append(args, "--set-upstream")
	}
	ref := "refs/heads/" + p.Branch
	return append(args, p.Remote, ref+":"+ref)
}

// Command is the command line approval shows: "git " + Args.
func (p Push) Command() string { return "git " + strings.Join(p.Args(), " ") }

// PushOf reads the push of a canonical git push operation and checks it again, so an operation
// that was altered after parsing (an extra metadata key, an option-looking remote, a forced
// refspec) is refused instead of run.
func PushOf(op Operation) (Push, error) {
	if op.Type != TypeGit || op.Action != ActionGitPush {
		return Push{}, fmt.Errorf("not a git push: %s %s", op.Type, op.Action)
	}
	for k := range op.Metadata {
		switch k {
		case MetaBranch, MetaForce, MetaSetUpstream:
		default:
			return Push{}, fmt.Errorf("git push: unexpected metadata %s", quote(k))
		}
	}
	p := Push{Remote: op.Target, Branch: op.Metadata[MetaBranch], Force: op.Metadata[MetaForce]}
	if err := checkRemote(p.Remote); err != nil {
		return Push{}, err
	}
	if err := checkBranch(p.Branch); err != nil {
		return Push{}, err
	}
	switch p.Force {
	case "", ForceOverwrite, ForceWithLease:
	default:
		return Push{}, fmt.Errorf("git push: force must be %q or %q, got %s", ForceOverwrite, ForceWithLease, quote(p.Force))
	}
	switch op.Metadata[MetaSetUpstream] {
	case "":
	case "true":
		p.SetUpstream = true
	default:
		return Push{}, fmt.Errorf("git push: set_upstream must be \"true\" or absent")
	}
	return p, nil
}

// canonPush brings a push into canonical form: the remote in Target (from target or
// metadata.remote), the branch in metadata.branch, force and set_upstream normalised; then
// PushOf must accept it.
func canonPush(op *Operation) error {
	remote := strings.TrimSpace(op.Target)
	if r, ok := op.Metadata[MetaRemote]; ok {
		r = strings.TrimSpace(r)
		if remote != "" && r != remote {
			return errorf(op.Source, "metadata.remote", "push to %s with target %s: give one of them", quote(r), quote(remote))
		}
		remote = r
		delete(op.Metadata, MetaRemote)
	}
	if remote == "" {
		return errorf(op.Source, "target", "git push must name the remote's URL (https://, ssh://, git:// or user@host:path)")
	}
	op.Target = remote
	if op.Metadata == nil {
		op.Metadata = map[string]string{}
	}
	if strings.TrimSpace(op.Metadata[MetaBranch]) == "" {
		return errorf(op.Source, "metadata.branch", "git push must name the branch it pushes")
	}
	// "main:main" and "refs/heads/main" are spellings of the branch itself; any other refspec is
	// refused by checkBranch.
	b := strings.TrimSpace(op.Metadata[MetaBranch])
	if src, dst, ok := strings.Cut(b, ":"); ok && src == dst {
		b = src
	}
	op.Metadata[MetaBranch] = strings.TrimPrefix(b, "refs/heads/")
	switch strings.ToLower(strings.TrimSpace(op.Metadata[MetaForce])) {
	case "", "false":
		delete(op.Metadata, MetaForce)
	case "true", "force", "--force", "-f":
		op.Metadata[MetaForce] = ForceOverwrite
	case "lease", "with-lease", "force-with-lease", "--force-with-lease":
		op.Metadata[MetaForce] = ForceWithLease
	default:
		return errorf(op.Source, "metadata.force", "want true, lease or false, got %s", quote(op.Metadata[MetaForce]))
	}
	switch strings.ToLower(strings.TrimSpace(op.Metadata[MetaSetUpstream])) {
	case "", "false":
		delete(op.Metadata, MetaSetUpstream)
	case "true":
		op.Metadata[MetaSetUpstream] = "true"
	default:
		return errorf(op.Source, "metadata.set_upstream", "want true or false, got %s", quote(op.Metadata[MetaSetUpstream]))
	}
	if len(op.Metadata) == 0 {
		op.Metadata = nil
	}
	if _, err := PushOf(*op); err != nil {
		return errorf(op.Source, "", "%v", err)
	}
	return nil
}

var (
	remoteName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	// scpLike is git's user@host:path form (the user is required, so a local path with a colon
	// is never taken for a host).
	scpLike = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*@[A-Za-z0-9][A-Za-z0-9.-]*:[A-Za-z0-9._~/][A-Za-z0-9._~/-]*$`)
)

// checkRemote accepts a network URL git pushes to over https, ssh or git. Remote names (their
// URL is the workspace's config, not what was approved), local paths, file://, transport
// helpers (ext::, fd::) and credentials in the URL are refused.
func checkRemote(r string) error {
	switch {
	case r == "":
		return fmt.Errorf("git push: empty remote")
	case strings.HasPrefix(r, "-"):
		return fmt.Errorf("git push: remote %s looks like an option", quote(r))
	case strings.Contains(r, "::"):
		return fmt.Errorf("git push: remote helper %s is not allowed", quote(r))
	case strings.ContainsFunc(r, func(c rune) bool { return c <= ' ' || c == 0x7f || c == '\\' }):
		return fmt.Errorf("git push: remote %s contains spaces or control characters", quote(r))
	case remoteName.MatchString(r) && !strings.Contains(r, ".."):
		return fmt.Errorf("git push: %s is a remote name; give its URL (https://, ssh://, git:// or user@host:path): the approver sees and the executor pushes exactly that URL", quote(r))
	case scpLike.MatchString(r) && !strings.Contains(r, ".."):
		return nil
	}
	u, perr := url.Parse(r)
	if perr != nil || u.Host == "" || u.Opaque != "" {
		return fmt.Errorf("git push: remote %s is not a https/ssh/git URL", quote(r))
	}
	switch u.Scheme {
	case "https", "ssh", "git":
	default:
		return fmt.Errorf("git push: scheme %s is not allowed (https, ssh or git)", quote(u.Scheme))
	}
	if _, hasPw := u.User.Password(); hasPw || (u.User != nil && u.Scheme == "https") {
		return fmt.Errorf("git push: credentials in the remote URL are not allowed")
	}
	if strings.HasPrefix(u.Host, "-") || u.RawQuery != "" || u.Fragment != "" || strings.Contains(u.Path, "..") {
		return fmt.Errorf("git push: remote URL %s is not allowed", quote(r))
	}
	return nil
}

// checkBranch accepts a branch name by git's ref rules, minus anything a refspec or the
// command line would read differently ("+main" forces, "a:b" renames, "-x" is an option).
func checkBranch(b string) error {
	bad := b == "" || b == "@" || b == "HEAD" || strings.HasPrefix(b, "-") || strings.HasPrefix(b, "+") ||
		strings.HasPrefix(b, "/") || strings.HasSuffix(b, "/") || strings.HasSuffix(b, ".") ||
		strings.HasSuffix(b, ".lock") || strings.Contains(b, "..") || strings.Contains(b, "@{") ||
		strings.Contains(b, "//") || strings.HasPrefix(b, "refs/") ||
		strings.ContainsFunc(b, func(c rune) bool { return c <= ' ' || c == 0x7f || strings.ContainsRune("~^:?*[\\", c) })
	for _, part := range strings.Split(b, "/") {
		bad = bad || strings.HasPrefix(part, ".") || strings.HasSuffix(part, ".lock")
	}
	if bad {
		return fmt.Errorf("git push: invalid branch %s", quote(b))
	}
	return nil
}
