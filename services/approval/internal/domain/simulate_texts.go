package domain

import "github.com/picoclaw-suite/picoclaw/pkg/fault"

// SimulateTexts are the words of a refused policy simulation (POST /v1/policy/simulate and
// `picoclaw policy test`): unlike a request's, its refusal names what the parser found, as data,
// since finding that out is what a simulation is for.
var SimulateTexts = fault.Catalog{
	CodePatchUnreadable: {"パッチを解釈できません: %[1]s", "patch: %[1]s"},
	CodeNoOperations:    {"パッチに操作がありません", "patch has no operations"},
}

// The codes of SimulateTexts.
const (
	CodePatchUnreadable = "PATCH_UNREADABLE"
	CodeNoOperations    = "PATCH_NO_OPERATIONS"
)

// PatchUnreadable is the refusal of a simulated patch the parser rejects with err.
func PatchUnreadable(err error) error {
	return SimulateTexts.New(ErrInvalid, CodePatchUnreadable, err.Error())
}

// NoOperations is the refusal of a simulated patch without operations.
func NoOperations() error { return SimulateTexts.New(ErrInvalid, CodeNoOperations) }
