package patch

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// A patch action whose diff reaches beyond its target is refused: approval shows and checks the
// target only, so anything else in the diff would run unseen.
func TestPatchActionDiffMustChangeOnlyItsTarget(t *testing.T) {
	hunkA := "--- a/docs/a.md\n+++ b/docs/a.md\n@@ -1 +1 @@\n-old\n+new\n"
	cases := map[string]string{
		"second file":  hunkA + "diff --git a/src/main.go b/src/main.go\n--- a/src/main.go\n+++ b/src/main.go\n@@ -1 +1 @@\n-x\n+y\n",
		"deleted file": hunkA + "diff --git a/src/main.go b/src/main.go\ndeleted file mode 100644\n--- a/src/main.go\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n",
		"other target": "--- a/src/main.go\n+++ b/src/main.go\n@@ -1 +1 @@\n-x\n+y\n",
		"new file":     "--- /dev/null\n+++ b/docs/a.md\n@@ -0,0 +1 @@\n+new\n",
		"rename":       "diff --git a/docs/a.md b/docs/b.md\nsimilarity index 100%\nrename from docs/a.md\nrename to docs/b.md\n",
		"not a diff":   "just some text",
	}
	for name, diff := range cases {
		t.Run(name, func(t *testing.T) {
			text := `[{"type":"file_edit","action":"patch","target":"docs/a.md","content":` + jsonString(diff) + `}]`
			_, err := Parse(text, Options{})
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "command 1") {
				t.Fatalf("Parse accepted or misreported a diff reaching beyond its target: %v", err)
			}
		})
	}
	ok := `[{"type":"file_edit","action":"patch","target":"docs/a.md","content":` + jsonString(hunkA) + `}]`
	p, err := Parse(ok, Options{})
	if err != nil {
		t.Fatalf("a diff of the target itself: %v", err)
	}
	if len(p.AffectedPaths) != 1 || p.AffectedPaths[0] != "docs/a.md" {
		t.Fatalf("affected paths = %v", p.AffectedPaths)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestGitTargetsAreOneNameTheScopeCheckSees(t *testing.T) {
	for name, text := range map[string]string{
		"two paths in one add":     `[{"type":"git_operation","action":"add","target":"docs/a.md src/other.go"}]`,
		"branch and target differ": `[{"type":"git_operation","action":"checkout","target":"docs/a.md","metadata":{"branch":"src/main.go"}}]`,
		"option-looking branch":    `[{"type":"git_operation","action":"checkout","metadata":{"branch":"--orphan"}}]`,
	} {
		if _, err := Parse(text, Options{}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	p, err := Parse(`[{"type":"git_operation","action":"checkout","metadata":{"branch":"src/main.go"}}]`, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if op := p.Operations[0]; op.Target != "src/main.go" || op.Metadata[MetaBranch] != "" {
		t.Fatalf("checkout branch not moved to the target: %+v", op)
	}
	if !slicesContains(OperationPaths(p.Operations[0]), "src/main.go") {
		t.Fatalf("scope check does not see the checked-out name: %v", OperationPaths(p.Operations[0]))
	}
}

func TestDestructiveGitFormsNeedApproval(t *testing.T) {
	for name, c := range map[string]struct {
		text   string
		delete bool
	}{
		"reset keep to a ref": {`[{"type":"git_operation","action":"reset","metadata":{"mode":"keep","ref":"HEAD~20"}}]`, true},
		"reset merge":         {`[{"type":"git_operation","action":"reset","metadata":{"mode":"merge"}}]`, true},
		"reset to a ref":      {`[{"type":"git_operation","action":"reset","metadata":{"ref":"HEAD~1"}}]`, true},
		"checkout dot":        {`[{"type":"git_operation","action":"checkout","target":"."}]`, true},
		"checkout a path":     {`[{"type":"git_operation","action":"checkout","target":"docs/a.md"}]`, true},
		"new branch":          {`[{"type":"git_operation","action":"checkout","target":"feature-x","metadata":{"new_branch":"true"}}]`, false},
		"unstage":             {`[{"type":"git_operation","action":"reset","target":"docs/a.md"}]`, false},
	} {
		p, err := Parse(c.text, Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := slicesContains(p.Flags, FlagDelete); got != c.delete {
			t.Errorf("%s: delete flag %v, want %v (flags %v)", name, got, c.delete, p.Flags)
		}
	}
}

func slicesContains[T comparable](s []T, v T) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
