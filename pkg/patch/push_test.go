package patch

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestGitDirNames(t *testing.T) {
	for _, p := range []string{".git", ".GIT", ".Git", ".gIt", ".git.", ".git..", ".git ", ".git. .", "sub/.GiT/config",
		"a/b/.git/hooks/pre-commit", ".git::$INDEX_ALLOCATION/config", "GIT~1/config", ".g\u200cit/config", "\ufeff.git",
		`sub\.git\config`} {
		if !TouchesGitDir(p) {
			t.Errorf("TouchesGitDir(%q) = false", p)
		}
	}
	for _, p := range []string{".gitignore", ".github/workflows/ci.yml", "git", "x.git", ".gitattributes", "docs/.git-notes",
		"my.git/README", ".gi", "gitx~1", ""} {
		if TouchesGitDir(p) {
			t.Errorf("TouchesGitDir(%q) = true", p)
		}
	}
}

func TestGitInternalsAreFlaggedInEveryOperation(t *testing.T) {
	for _, text := range []string{
		`[{"type":"file_edit","action":"update","target":".GIT/config","content":"x"}]`,
		`[{"type":"file_edit","action":"create","target":"sub/.Git./hooks/pre-commit","content":"x"}]`,
		`[{"type":"file_edit","action":"rename","target":"a","metadata":{"to":"x/.git/hooks/post-merge"}}]`,
		`[{"type":"git_operation","action":"add","target":"vendor/.gIt/HEAD"}]`,
		`[{"type":"shell_command","action":"run","target":"echo x > .GIT/hooks/pre-commit"}]`,
	} {
		p, err := Parse(text, Options{})
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if !p.HasFlag(FlagGitInternals) {
			t.Errorf("%s: flags %v", text, p.Flags)
		}
	}
}

func TestPushModel(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		command string
		flags   []Flag
		err     string
	}{
		{name: "remote name refused", text: `[{"type":"git_operation","action":"push","target":"origin","metadata":{"branch":"main"}}]`,
			err: "is a remote name; give its URL"},
		{name: "remote name in a git block refused", text: "```git\ngit push origin main\n```\n", err: "is a remote name; give its URL"},
		{name: "remote in metadata", text: `[{"type":"git_operation","action":"push","metadata":{"remote":"https://github.com/o/r.git","branch":"feature/x"}}]`,
			command: "git push https://github.com/o/r.git refs/heads/feature/x:refs/heads/feature/x", flags: []Flag{FlagNetwork, FlagPushPublic}},
		{name: "scp-like url", text: `[{"type":"git_operation","action":"push","target":"git@github.com:o/r.git","metadata":{"branch":"main"}}]`,
			command: "git push git@github.com:o/r.git refs/heads/main:refs/heads/main", flags: []Flag{FlagNetwork, FlagPushPublic}},
		{name: "force is its own flag", text: `[{"type":"git_operation","action":"push","target":"https://git.example.com/team/repo.git","metadata":{"branch":"main","force":true}}]`,
			command: "git push --force https://git.example.com/team/repo.git refs/heads/main:refs/heads/main", flags: []Flag{FlagForcePush, FlagNetwork, FlagPushPublic}},
		{name: "force with lease", text: "```git\ngit push --force-with-lease -u https://git.example.com/team/repo.git main:main\n```\n",
			command: "git push --force-with-lease --set-upstream https://git.example.com/team/repo.git refs/heads/main:refs/heads/main", flags: []Flag{FlagForcePush, FlagNetwork, FlagPushPublic}},
		{name: "force false", text: `[{"type":"git_operation","action":"push","target":"https://git.example.com/team/repo.git","metadata":{"branch":"refs/heads/dev","force":"false"}}]`,
			command: "git push https://git.example.com/team/repo.git refs/heads/dev:refs/heads/dev", flags: []Flag{FlagNetwork, FlagPushPublic}},
		{name: "no remote", text: "```git\ngit push\n```\n", err: "must name the remote"},
		{name: "no branch", text: `[{"type":"git_operation","action":"push","target":"https://git.example.com/team/repo.git"}]`, err: "must name the branch"},
		{name: "remote twice", text: `[{"type":"git_operation","action":"push","target":"https://git.example.com/team/repo.git","metadata":{"remote":"upstream","branch":"main"}}]`, err: "give one of them"},
		{name: "option remote", text: `[{"type":"git_operation","action":"push","target":"--receive-pack=sh","metadata":{"branch":"main"}}]`, err: "option"},
		{name: "ext helper", text: `[{"type":"git_operation","action":"push","metadata":{"remote":"ext::sh -c id","branch":"main"}}]`, err: "helper"},
		{name: "file url", text: `[{"type":"git_operation","action":"push","target":"file:///srv/repo.git","metadata":{"branch":"main"}}]`, err: "is not a https/ssh/git URL"},
		{name: "http url", text: `[{"type":"git_operation","action":"push","target":"http://example.com/r.git","metadata":{"branch":"main"}}]`, err: "scheme"},
		{name: "local path", text: `[{"type":"git_operation","action":"push","target":"../other","metadata":{"branch":"main"}}]`, err: "is not a https/ssh/git URL"},
		{name: "credentials", text: `[{"type":"git_operation","action":"push","target":"https://u:p@github.com/o/r.git","metadata":{"branch":"main"}}]`, err: "credentials"},
		{name: "forced refspec", text: `[{"type":"git_operation","action":"push","target":"https://git.example.com/team/repo.git","metadata":{"branch":"+main"}}]`, err: "invalid branch"},
		{name: "other refspec", text: "```git\ngit push https://git.example.com/team/repo.git main:release\n```\n", err: "invalid branch"},
		{name: "option branch", text: `[{"type":"git_operation","action":"push","target":"https://git.example.com/team/repo.git","metadata":{"branch":"--delete"}}]`, err: "invalid branch"},
		{name: "unknown metadata", text: `[{"type":"git_operation","action":"push","target":"https://git.example.com/team/repo.git","metadata":{"branch":"main","tags":"true"}}]`, err: "unexpected metadata"},
		{name: "bad force", text: `[{"type":"git_operation","action":"push","target":"https://git.example.com/team/repo.git","metadata":{"branch":"main","force":"maybe"}}]`, err: "want true, lease or false"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(tc.text, Options{})
			if tc.err != "" {
				if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			op := p.Operations[0]
			push, err := PushOf(op)
			if err != nil {
				t.Fatal(err)
			}
			if got := push.Command(); got != tc.command {
				t.Errorf("command = %q, want %q", got, tc.command)
			}
			if !slices.Equal(op.Flags, tc.flags) {
				t.Errorf("flags = %v, want %v", op.Flags, tc.flags)
			}
		})
	}
}

// An operation changed after parsing is refused, not run differently.
func TestPushOfRefusesAlteredOperations(t *testing.T) {
	base := Operation{Type: TypeGit, Action: ActionGitPush, Target: "https://git.example.com/team/repo.git", Metadata: map[string]string{MetaBranch: "main"}}
	alter := func(f func(*Operation)) Operation {
		op := base
		op.Metadata = map[string]string{MetaBranch: "main"}
		f(&op)
		return op
	}
	for name, op := range map[string]Operation{
		"extra remote":     alter(func(o *Operation) { o.Metadata[MetaRemote] = "evil" }),
		"two words":        alter(func(o *Operation) { o.Target = "origin main" }),
		"force spelling":   alter(func(o *Operation) { o.Metadata[MetaForce] = "yes" }),
		"forced refspec":   alter(func(o *Operation) { o.Metadata[MetaBranch] = "+main" }),
		"empty target":     alter(func(o *Operation) { o.Target = "" }),
		"upstream value":   alter(func(o *Operation) { o.Metadata[MetaSetUpstream] = "1" }),
		"not a push":       alter(func(o *Operation) { o.Action = ActionGitCommit }),
		"receive-pack":     alter(func(o *Operation) { o.Metadata["receive_pack"] = "sh" }),
		"option as remote": alter(func(o *Operation) { o.Target = "--mirror" }),
	} {
		if _, err := PushOf(op); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := PushOf(base); err != nil {
		t.Fatal(err)
	}
}
