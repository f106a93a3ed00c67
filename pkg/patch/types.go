// Package patch parses proposal patches (JSON commands, Markdown fences, unified/git diffs)
// into one canonical operation list whose sha256 is the approval binding. Approval and the
// executor both use it, so the content that was approved is exactly what runs.
package patch

// Format is the patch text format that was detected.
type Format string

const (
	FormatJSON     Format = "json"
	FormatMarkdown Format = "markdown"
	FormatDiff     Format = "diff"
	FormatEmpty    Format = "empty"
)

// Type is an operation type (SPEC §6).
type Type string

const (
	TypeFileEdit Type = "file_edit"
	TypeShell    Type = "shell_command"
	TypeGit      Type = "git_operation"
	TypeBrowser  Type = "browser"
)

// Actions per type. ActionPatch applies a unified diff (Content) to Target; it is produced by
// the diff format.
const (
	ActionCreate = "create"
	ActionUpdate = "update"
	ActionDelete = "delete"
	ActionAppend = "append"
	ActionRename = "rename"
	ActionPatch  = "patch"

	ActionRun = "run"

	ActionGitAdd      = "add"
	ActionGitCommit   = "commit"
	ActionGitReset    = "reset"
	ActionGitCheckout = "checkout"
	ActionGitPush     = "push"

	// Browser actions are the MCP Chrome bridge's tool names (hangwin/mcp-chrome): the
	// target is the URL (navigate) or the CSS selector, the content is the value to fill or
	// the keys to press. The bridge's script injection is not offered.
	ActionChromeNavigate      = "chrome_navigate"
	ActionChromeClickElement  = "chrome_click_element"
	ActionChromeFillOrSelect  = "chrome_fill_or_select"
	ActionChromeGetWebContent = "chrome_get_web_content"
	ActionChromeScreenshot    = "chrome_screenshot"
	ActionChromeKeyboard      = "chrome_keyboard"

	// Earlier names, kept as aliases so older proposals still parse (and hash) as written.
	ActionChromeClick   = "chrome_click"    // alias of chrome_click_element
	ActionChromeGetText = "chrome_get_text" // alias of chrome_get_web_content
)

// browserAliases maps an alias to the bridge action it stands for.
var browserAliases = map[string]string{
	ActionChromeClick:   ActionChromeClickElement,
	ActionChromeGetText: ActionChromeGetWebContent,
}

// BrowserActions lists every browser action a patch may use: the bridge's tool names, then
// the aliases.
func BrowserActions() []string {
	return []string{ActionChromeNavigate, ActionChromeClickElement, ActionChromeFillOrSelect,
		ActionChromeGetWebContent, ActionChromeScreenshot, ActionChromeKeyboard,
		ActionChromeClick, ActionChromeGetText}
}

// CanonicalBrowserAction resolves an alias to the bridge action it stands for; other names
// are returned unchanged.
func CanonicalBrowserAction(action string) string {
	if a, ok := browserAliases[action]; ok {
		return a
	}
	return action
}

// Flag marks an operation (or a whole patch) for policy evaluation.
type Flag string

const (
	FlagDelete         Flag = "delete"
	FlagRename         Flag = "rename"
	FlagBroadOverwrite Flag = "broad_overwrite"
	FlagSendSensitive  Flag = "send_sensitive"
	FlagPushPublic     Flag = "push_public"
	FlagBrowser        Flag = "browser"
	// FlagExecuteScript names script execution in policies. No browser action carries it:
	// the bridge has no plain execute tool and its script injection is not offered, so a
	// patch that asks for a script is refused as invalid.
	FlagExecuteScript Flag = "execute_script"
	FlagShell         Flag = "shell"
	// FlagForcePush: a git push that overwrites remote history (--force, --force-with-lease).
	FlagForcePush Flag = "force_push"
	// FlagNetwork: the job reaches the network (shell network tools, package downloads, git
	// fetch/push). The executor's sandbox has no network unless configured.
	FlagNetwork Flag = "network"
	// FlagGitInternals: the operation writes inside a .git directory (any spelling). Refused.
	FlagGitInternals Flag = "git_internals"

	// Shell risk flags, from the parsed syntax tree (AnalyzeShell).
	FlagPermission       Flag = "permission"        // chmod, chown, chgrp, setfacl, ...
	FlagOutsideWorkspace Flag = "outside_workspace" // writes to absolute, ~ or ../ paths
	FlagRemoteCode       Flag = "remote_code"       // curl | sh: downloaded code runs
	FlagPrivilege        Flag = "privilege"         // sudo, su, container daemons
	FlagBackground       Flag = "background"        // &, nohup, setsid, disown: outlives the command
	FlagDynamicCommand   Flag = "dynamic_command"   // eval, $cmd, bash -c "$x", inline interpreter code
	FlagShellUnparsed    Flag = "shell_unparsed"    // the script does not parse
)

// Operation is one canonical operation.
type Operation struct {
	// Index is the 0-based position in author order.
	Index  int    `json:"index"`
	Type   Type   `json:"type"`
	Action string `json:"action"`
	// Target is a normalised workspace-relative slash path for file operations (and git
	// add/reset/checkout paths), the command line for shell operations, and the URL or
	// selector for browser operations.
	Target string `json:"target"`
	// Content is the file content, appended text, unified diff (ActionPatch), commit message,
	// or script.
	Content string `json:"content,omitempty"`
	// ContentSHA256 is the hex sha256 of Content.
	ContentSHA256 string `json:"content_sha256"`
	// Metadata holds extra arguments (e.g. "to" for rename, "remote"/"branch" for push),
	// with deterministic (sorted) encoding in the hash.
	Metadata map[string]string `json:"metadata,omitempty"`
	// Flags detected on this operation.
	Flags []Flag `json:"flags,omitempty"`
	// Source says where in the patch text the operation came from, for error messages
	// ("command 3", "fence 2 (line 14)", "diff file 1").
	Source string `json:"source"`
}

// DiffStats counts changed files and lines.
type DiffStats struct {
	Files     int `json:"files"`
	Additions int `json:"additions"`
	Deletions int `json:"deletions"`
}

// Patch is a parsed patch.
type Patch struct {
	Format     Format      `json:"format"`
	Operations []Operation `json:"operations"`
	// AffectedPaths are the distinct workspace paths the patch touches, sorted.
	AffectedPaths []string  `json:"affected_paths"`
	Stats         DiffStats `json:"stats"`
	// Flags is the union of every operation's flags plus patch-level ones (broad_overwrite).
	Flags []Flag `json:"flags"`
	// Unknown lists blocks that were not understood (reported, never silently dropped).
	Unknown []string `json:"unknown,omitempty"`
	// Hash is the hex sha256 of the canonical operation list: the approval binding.
	Hash string `json:"hash"`
}

// Options tune parsing.
type Options struct {
	// BroadOverwriteFiles: more written files than this flags the patch broad_overwrite
	// (approval.broad_overwrite_files, default 10).
	BroadOverwriteFiles int
}
