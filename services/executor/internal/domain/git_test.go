package domain

import (
	"errors"
	"reflect"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
)

func TestGitArgs(t *testing.T) {
	op := func(action, target, content string, md map[string]string) patch.Operation {
		return patch.Operation{Type: patch.TypeGit, Action: action, Target: target, Content: content, Metadata: md}
	}
	tests := []struct {
		name string
		op   patch.Operation
		want []string
		err  error
	}{
		{"add paths", op("add", "a.go b/c.go", "", nil), []string{"add", "--", "a.go", "b/c.go"}, nil},
		{"add all", op("add", ".", "", nil), []string{"add", "--", "."}, nil},
		{"add repeated verb", op("add", "git add x.go", "", nil), []string{"add", "--", "x.go"}, nil},
		{"add nothing", op("add", "", "", nil), nil, ErrInvalid},
		{"add option injection", op("add", "--exec=sh", "", nil), nil, ErrInvalid},
		{"add outside", op("add", "../x", "", nil), nil, ErrPermission},
		{"commit", op("commit", "", "fix: typo", nil), []string{"commit", "-m", "fix: typo"}, nil},
		{"commit message looks like option", op("commit", "", "--amend", nil), []string{"commit", "-m", "--amend"}, nil},
		{"commit empty", op("commit", "", " ", nil), nil, ErrInvalid},
		{"reset path", op("reset", "a.go", "", nil), []string{"reset", "a.go"}, nil},
		{"reset hard to rev as target", op("reset", "HEAD~1", "", map[string]string{"mode": "hard"}), []string{"reset", "--hard", "HEAD~1"}, nil},
		{"reset option target", op("reset", "--hard", "", nil), nil, ErrInvalid},
		{"reset hard ref", op("reset", "", "", map[string]string{"mode": "hard", "ref": "HEAD~1"}), []string{"reset", "--hard", "HEAD~1"}, nil},
		{"reset bad mode", op("reset", "", "", map[string]string{"mode": "exec"}), nil, ErrInvalid},
		{"checkout branch", op("checkout", "", "", map[string]string{"branch": "feature/x"}), []string{"checkout", "feature/x"}, nil},
		{"checkout target", op("checkout", "main", "", nil), []string{"checkout", "main"}, nil},
		{"checkout new branch", op("checkout", "topic", "", map[string]string{"new_branch": "true"}), []string{"checkout", "-b", "topic"}, nil},
		{"checkout outside", op("checkout", "../x", "", nil), nil, ErrPermission},
		{"checkout option branch", op("checkout", "", "", map[string]string{"branch": "-b"}), nil, ErrInvalid},
		{"push default", op("push", "", "", nil), nil, ErrInvalid},
		{"push remote branch", op("push", "https://git.example.com/team/repo.git", "", map[string]string{"branch": "main"}), []string{"push", "https://git.example.com/team/repo.git", "refs/heads/main:refs/heads/main"}, nil},
		{"push url", op("push", "https://github.com/o/r.git", "", map[string]string{"branch": "main"}), []string{"push", "https://github.com/o/r.git", "refs/heads/main:refs/heads/main"}, nil},
		{"push forced", op("push", "https://git.example.com/team/repo.git", "", map[string]string{"branch": "main", "force": "true"}), []string{"push", "--force", "https://git.example.com/team/repo.git", "refs/heads/main:refs/heads/main"}, nil},
		{"push forced with lease", op("push", "https://git.example.com/team/repo.git", "", map[string]string{"branch": "main", "force": "lease"}), []string{"push", "--force-with-lease", "https://git.example.com/team/repo.git", "refs/heads/main:refs/heads/main"}, nil},
		{"push parser shape", op("push", "git@git.example.com:team/repo.git", "", map[string]string{"branch": "main", "set_upstream": "true"}), []string{"push", "--set-upstream", "git@git.example.com:team/repo.git", "refs/heads/main:refs/heads/main"}, nil},
		{"push without branch", op("push", "https://git.example.com/team/repo.git", "", nil), nil, ErrInvalid},
		{"push two words", op("push", "origin main", "", nil), nil, ErrInvalid},
		{"push remote not as approved", op("push", "https://git.example.com/team/repo.git", "", map[string]string{"remote": "evil", "branch": "main"}), nil, ErrInvalid},
		{"push unknown force", op("push", "https://git.example.com/team/repo.git", "", map[string]string{"branch": "main", "force": "yes"}), nil, ErrInvalid},
		{"push forced refspec", op("push", "https://git.example.com/team/repo.git", "", map[string]string{"branch": "+main"}), nil, ErrInvalid},
		{"push option remote", op("push", "--receive-pack=sh", "", map[string]string{"branch": "main"}), nil, ErrInvalid},
		{"push url remote", op("push", "ext::sh -c id", "", map[string]string{"branch": "main"}), nil, ErrInvalid},
		{"unknown", op("rebase", "", "", nil), nil, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := GitArgs(tt.op)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("error = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("GitArgs = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
