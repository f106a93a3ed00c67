package domain

import (
	"path"
	"slices"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
)

// SimilarScope is what an "approve similar" grant covers, taken from the approved job: the
// directories of its paths, its task type and route, and its operation kinds — never a kind or
// a flag of the hard-require set.
type SimilarScope struct {
	PathPrefixes   []string
	TaskTypes      []string
	Routes         []string
	OperationKinds []string
}

// neverSimilar are the operation kinds no "approve similar" grant names: each is a hard-require
// operation whatever its flags (delete, rename, push, browser), or a shell command, which a grant
// covers only with ops=shell.
func neverSimilar(op patch.Operation) bool {
	switch op.Type {
	case patch.TypeShell, patch.TypeBrowser:
		return true
	case patch.TypeFileEdit:
		return op.Action == patch.ActionDelete || op.Action == patch.ActionRename
	case patch.TypeGit:
		return op.Action == patch.ActionGitPush || op.Action == patch.ActionGitReset || op.Action == patch.ActionGitCheckout
	}
	return true
}

// SimilarScopeOf derives the scope of an "approve similar" grant from a job. Operations of a
// never-similar kind or carrying a hard-require flag add nothing; a job with nothing left, or
// without a workspace path, cannot be the model of a grant (ErrInvalid). A file at the top of
// the workspace scopes to itself, never to the whole workspace.
func SimilarScopeOf(j Job) (SimilarScope, error) {
	var sc SimilarScope
	for _, op := range j.Operations {
		if neverSimilar(op) || hasHardRequireFlag(op) {
			continue
		}
		kind := string(op.Type) + "." + op.Action
		if !slices.Contains(sc.OperationKinds, kind) {
			sc.OperationKinds = append(sc.OperationKinds, kind)
		}
		for _, p := range patch.OperationPaths(op) {
			dir := path.Dir(p)
			if dir == "." || dir == "/" {
				dir = p
			}
			if !slices.Contains(sc.PathPrefixes, dir) {
				sc.PathPrefixes = append(sc.PathPrefixes, dir)
			}
		}
	}
	if len(sc.OperationKinds) == 0 {
		return SimilarScope{}, Fail(ErrInvalid, CodeSimilarNothing, j.ID)
	}
	if len(sc.PathPrefixes) == 0 {
		return SimilarScope{}, Fail(ErrInvalid, CodeSimilarNoPath, j.ID)
	}
	slices.Sort(sc.PathPrefixes)
	slices.Sort(sc.OperationKinds)
	// The job's task type and route, even when empty: a grant scoped from a job never covers
	// another task type or route.
	sc.TaskTypes = []string{j.TaskType}
	sc.Routes = []string{j.Route}
	return sc, nil
}

func hasHardRequireFlag(op patch.Operation) bool {
	for _, f := range hardRequireFlags {
		if op.HasFlag(f) {
			return true
		}
	}
	return false
}
