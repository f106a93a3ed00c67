package patch

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/picoclaw-suite/picoclaw/pkg/redact"
)

// DefaultBroadOverwriteFiles is used when Options.BroadOverwriteFiles is zero.
const DefaultBroadOverwriteFiles = 10

// MaxPatchBytes bounds the patch text; bigger proposals are refused rather than parsed.
const MaxPatchBytes = 4 << 20

// raw is an operation as written, before validation and normalisation.
type raw struct {
	Type     string
	Action   string
	Target   string
	Content  string
	Metadata map[string]string
	Source   string
}

// Parse detects the format of text, parses it into canonical operations in author order,
// computes affected paths, diff stats, flags and the canonical hash. Every error wraps
// ErrInvalid and names the operation it is about.
func Parse(text string, opts Options) (*Patch, error) {
	if len(text) > MaxPatchBytes {
		return nil, errorf("patch", "", "patch is %d bytes, the limit is %d", len(text), MaxPatchBytes)
	}
	if strings.ContainsRune(text, 0) {
		return nil, errorf("patch", "", "patch contains a NUL byte")
	}
	if !utf8.ValidString(text) {
		return nil, errorf("patch", "", "patch is not valid UTF-8")
	}
	// A byte order mark from an editor is not part of any format.
	text = strings.TrimPrefix(text, "\ufeff")
	p := &Patch{}
	var (
		raws  []raw
		stats *DiffStats
		err   error
	)
	switch detect(text) {
	case FormatEmpty:
		p.Format = FormatEmpty
	case FormatJSON:
		p.Format = FormatJSON
		raws, err = parseJSON(strings.TrimSpace(text), "")
	case FormatDiff:
		p.Format = FormatDiff
		var d diffResult
		d, err = parseDiff(text, "")
		raws, p.Unknown = d.ops, d.unknown
		stats = &d.stats
	case FormatMarkdown:
		p.Format = FormatMarkdown
		raws, p.Unknown, err = parseMarkdown(text)
	default:
		return nil, errorf("patch", "", "unrecognised format: expected a JSON array of commands, Markdown code fences or a unified diff")
	}
	if err != nil {
		return nil, err
	}
	p.Operations = make([]Operation, 0, len(raws))
	for i, r := range raws {
		op, err := canonicalize(r)
		if err != nil {
			return nil, err
		}
		op.Index = i
		p.Operations = append(p.Operations, op)
	}
	finish(p, stats, opts)
	return p, nil
}

// detect picks the format from the text's shape.
func detect(text string) Format {
	t := strings.TrimSpace(text)
	jsonish := strings.HasPrefix(t, "[") || strings.HasPrefix(t, "{")
	switch {
	case t == "":
		return FormatEmpty
	case jsonish && json.Valid([]byte(t)):
		return FormatJSON
	}
	hasFence, hasDiff := false, false
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), MaxPatchBytes+1)
	prevMinus := false
	for sc.Scan() {
		line := sc.Text()
		if _, _, ok := fenceOpen(line); ok {
			hasFence = true
			break
		}
		if strings.HasPrefix(line, "diff --git ") || (prevMinus && strings.HasPrefix(line, "+++ ")) {
			// Whichever comes first decides: a diff's own lines (a context line " ```" of a
			// README) must not turn it into Markdown, and a ```diff fence stays Markdown.
			hasDiff = true
			break
		}
		prevMinus = strings.HasPrefix(line, "--- ")
	}
	switch {
	case hasFence:
		return FormatMarkdown
	case hasDiff:
		return FormatDiff
	case jsonish:
		// Broken JSON: parse it anyway so the error says what is wrong.
		return FormatJSON
	}
	return ""
}

// canonicalize validates one operation and brings it into canonical form.
func canonicalize(r raw) (Operation, error) {
	typ := Type(strings.ToLower(strings.TrimSpace(r.Type)))
	action := strings.ToLower(strings.TrimSpace(r.Action))
	op := Operation{Type: typ, Action: action, Target: r.Target, Content: r.Content, Source: r.Source}
	if len(r.Metadata) > 0 {
		op.Metadata = make(map[string]string, len(r.Metadata))
		for k, v := range r.Metadata {
			if strings.TrimSpace(k) == "" {
				return op, errorf(r.Source, "metadata", "empty key")
			}
			op.Metadata[k] = v
		}
	}
	if typ == "" {
		return op, errorf(r.Source, "type", "missing")
	}
	actions, ok := validActions[typ]
	if !ok {
		return op, errorf(r.Source, "type", "unknown type %s (want file_edit, shell_command, git_operation or browser)", quote(string(typ)))
	}
	if action == "" {
		return op, errorf(r.Source, "action", "missing for %s", typ)
	}
	if !slices.Contains(actions, action) {
		return op, errorf(r.Source, "action", "unknown action %s for %s (want %s)", quote(action), typ, strings.Join(actions, ", "))
	}
	var err error
	switch typ {
	case TypeFileEdit:
		err = canonFile(&op)
	case TypeShell:
		err = canonShell(&op)
	case TypeGit:
		err = canonGit(&op)
	case TypeBrowser:
		err = canonBrowser(&op)
	}
	if err != nil {
		return op, err
	}
	sum := sha256.Sum256([]byte(op.Content))
	op.ContentSHA256 = hex.EncodeToString(sum[:])
	op.Flags = opFlags(op)
	return op, nil
}

var validActions = map[Type][]string{
	TypeFileEdit: {ActionCreate, ActionUpdate, ActionDelete, ActionAppend, ActionRename, ActionPatch},
	TypeShell:    {ActionRun},
	TypeGit:      {ActionGitAdd, ActionGitCommit, ActionGitReset, ActionGitCheckout, ActionGitPush},
	TypeBrowser:  BrowserActions(),
}

func canonFile(op *Operation) error {
	p, err := NormalizePath(op.Target)
	if err != nil {
		return errorf(op.Source, "target", "%v", err)
	}
	op.Target = p
	switch op.Action {
	case ActionRename:
		to, ok := op.Metadata[MetaTo]
		if !ok || strings.TrimSpace(to) == "" {
			return errorf(op.Source, "metadata", "rename needs metadata.to (the new path)")
		}
		np, err := NormalizePath(to)
		if err != nil {
			return errorf(op.Source, "metadata.to", "%v", err)
		}
		if np == p {
			return errorf(op.Source, "metadata.to", "rename to the same path %s", quote(p))
		}
		op.Metadata[MetaTo] = np
	case ActionPatch:
		if strings.TrimSpace(op.Content) == "" {
			return errorf(op.Source, "content", "patch action needs a unified diff")
		}
		// The diff must change exactly the target: a diff that also touches, creates, deletes or
		// renames other files would run work the approval never showed or checked.
		d, err := parseDiff(op.Content, op.Source)
		if err != nil {
			return errorf(op.Source, "content", "%v", err)
		}
		if len(d.unknown) > 0 || len(d.ops) != 1 || d.ops[0].Action != ActionPatch {
			return errorf(op.Source, "content", "the diff of a patch action must change only %s (no other files, creations, deletions or renames)", quote(p))
		}
		if dp, err := NormalizePath(d.ops[0].Target); err != nil || dp != p {
			return errorf(op.Source, "content", "the diff changes %s, not the target %s", quote(d.ops[0].Target), quote(p))
		}
	case ActionDelete:
		if op.Content != "" {
			return errorf(op.Source, "content", "delete takes no content")
		}
	}
	return nil
}

func canonShell(op *Operation) error {
	if strings.TrimSpace(op.Target) == "" {
		return errorf(op.Source, "target", "empty command")
	}
	return nil
}

func canonGit(op *Operation) error {
	t := strings.TrimSpace(op.Target)
	if strings.HasPrefix(t, "-") {
		return errorf(op.Source, "target", "%s looks like an option; put options in metadata", quote(t))
	}
	switch op.Action {
	case ActionGitAdd, ActionGitReset, ActionGitCheckout:
		// One path (or ref) per operation: the executor passes the target as one argument, and
		// approval checks exactly that one name against the Auto-Approve scope.
		if strings.ContainsAny(t, " \t\r\n") {
			return errorf(op.Source, "target", "one path per git %s, got %s (use one operation per path)", op.Action, quote(t))
		}
	}
	if op.Action == ActionGitCheckout {
		// A branch in metadata is what the executor checks out: make it the target, so the scope
		// check sees the name that will be used.
		if b := strings.TrimSpace(op.Metadata[MetaBranch]); b != "" {
			if t != "" && t != b {
				return errorf(op.Source, "metadata.branch", "checkout of %s with target %s: give one of them", quote(b), quote(t))
			}
			if strings.ContainsAny(b, " \t\r\n") || strings.HasPrefix(b, "-") {
				return errorf(op.Source, "metadata.branch", "invalid branch %s", quote(b))
			}
			t = b
			delete(op.Metadata, MetaBranch)
		}
	}
	switch op.Action {
	case ActionGitAdd, ActionGitCheckout:
		if t == "" {
			return errorf(op.Source, "target", "empty target")
		}
		fallthrough
	case ActionGitReset:
		if t == "" || t == "." {
			op.Target = t
			return nil
		}
		p, err := NormalizePath(t)
		if err != nil {
			return errorf(op.Source, "target", "%v", err)
		}
		op.Target = p
	case ActionGitPush:
		return canonPush(op)
	case ActionGitCommit:
		if strings.TrimSpace(op.Content) == "" && t != "" {
			// A commit message given as target is moved to content, where the executor reads it.
			op.Content, op.Target = op.Target, ""
		}
	}
	return nil
}

func canonBrowser(op *Operation) error {
	t := strings.TrimSpace(op.Target)
	switch CanonicalBrowserAction(op.Action) {
	case ActionChromeNavigate:
		u, err := url.Parse(t)
		if t == "" {
			return errorf(op.Source, "target", "empty URL")
		}
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return errorf(op.Source, "target", "navigate needs an http(s) URL, got %s", quote(t))
		}
	case ActionChromeClickElement:
		// The bridge clicks a selector or, when both are given in metadata, coordinates.
		if t == "" && (op.Metadata[MetaX] == "" || op.Metadata[MetaY] == "") {
			return errorf(op.Source, "target", "%s needs a selector (or metadata.x and metadata.y)", op.Action)
		}
	case ActionChromeFillOrSelect:
		if t == "" {
			return errorf(op.Source, "target", "empty selector")
		}
		if err := contentFromMeta(op, MetaValue); err != nil {
			return err
		}
	case ActionChromeKeyboard:
		if err := contentFromMeta(op, MetaKeys); err != nil {
			return err
		}
		if strings.TrimSpace(op.Content) == "" {
			return errorf(op.Source, "content", "%s needs the keys to press in content", op.Action)
		}
	}
	op.Target = t
	return nil
}

// contentFromMeta moves metadata[key] into the content when the author put it there, so the
// value is hashed and shown like any content; giving both is refused.
func contentFromMeta(op *Operation, key string) error {
	v, ok := op.Metadata[key]
	if !ok {
		return nil
	}
	if op.Content != "" && op.Content != v {
		return errorf(op.Source, "metadata."+key, "given both as content and as metadata.%s", key)
	}
	op.Content = v
	delete(op.Metadata, key)
	if len(op.Metadata) == 0 {
		op.Metadata = nil
	}
	return nil
}

// opFlags detects the risk flags of one operation.
func opFlags(op Operation) []Flag {
	var f []Flag
	add := func(fl Flag) {
		if !slices.Contains(f, fl) {
			f = append(f, fl)
		}
	}
	switch op.Type {
	case TypeFileEdit:
		switch op.Action {
		case ActionDelete:
			add(FlagDelete)
		case ActionRename:
			add(FlagRename)
		}
	case TypeShell:
		add(FlagShell)
		for _, fl := range AnalyzeShell(ShellScript(op)).Flags() {
			add(fl)
		}
	case TypeGit:
		switch op.Action {
		case ActionGitPush:
			add(FlagPushPublic)
			add(FlagNetwork)
			if op.Metadata[MetaForce] != "" {
				add(FlagForcePush)
			}
		case ActionGitReset:
			// Resets that move the branch or rewrite the working tree throw work away.
			switch op.Metadata[MetaMode] {
			case "hard", "keep", "merge":
				add(FlagDelete)
			}
			if op.Metadata[MetaForce] == "true" || op.Metadata["ref"] != "" {
				add(FlagDelete)
			}
		case ActionGitCheckout:
			// Checking out paths (or ".") discards their changes; switching branches rewrites the
			// working tree. Only creating a new branch keeps everything.
			if op.Metadata[MetaNewBranch] != "true" {
				add(FlagDelete)
			}
		}
	case TypeBrowser:
		add(FlagBrowser)
	}
	for _, p := range OperationPaths(op) {
		if TouchesGitDir(p) {
			add(FlagGitInternals)
		}
	}
	if looksSecret(op.Target) || looksSecret(op.Content) {
		add(FlagSendSensitive)
	}
	for k, v := range op.Metadata {
		if looksSecret(k+"="+v) || looksSecret(v) {
			add(FlagSendSensitive)
		}
	}
	slices.Sort(f)
	return f
}

func looksSecret(s string) bool {
	return s != "" && redact.Secrets(s) != s
}

// finish fills affected paths, stats, patch flags and the hash.
func finish(p *Patch, stats *DiffStats, opts Options) {
	limit := opts.BroadOverwriteFiles
	if limit <= 0 {
		limit = DefaultBroadOverwriteFiles
	}
	paths := map[string]bool{}
	written := map[string]bool{}
	var computed DiffStats
	flags := map[Flag]bool{}
	for _, op := range p.Operations {
		for _, f := range op.Flags {
			flags[f] = true
		}
		for _, path := range OperationPaths(op) {
			paths[path] = true
		}
		if op.Type == TypeFileEdit {
			written[op.Target] = true
			if to := op.Metadata[MetaTo]; op.Action == ActionRename && to != "" {
				written[to] = true
			}
			a, d := opLineStats(op)
			computed.Additions += a
			computed.Deletions += d
		}
	}
	computed.Files = len(written)
	if stats != nil {
		computed = *stats
	}
	p.Stats = computed
	if len(written) > limit {
		flags[FlagBroadOverwrite] = true
	}
	p.AffectedPaths = make([]string, 0, len(paths))
	for path := range paths {
		p.AffectedPaths = append(p.AffectedPaths, path)
	}
	slices.Sort(p.AffectedPaths)
	p.Flags = make([]Flag, 0, len(flags))
	for f := range flags {
		p.Flags = append(p.Flags, f)
	}
	slices.Sort(p.Flags)
	p.Hash = Hash(p.Operations)
}

// OperationPaths are the workspace paths an operation touches (none for shell and browser
// operations, whose effects cannot be known in advance).
func OperationPaths(op Operation) []string { return AppendOperationPaths(nil, op) }

// AppendOperationPaths appends OperationPaths(op) to dst (a caller evaluating many operations
// reuses one buffer).
func AppendOperationPaths(dst []string, op Operation) []string {
	switch op.Type {
	case TypeFileEdit:
		if op.Action == ActionRename && op.Metadata[MetaTo] != "" {
			return append(dst, op.Target, op.Metadata[MetaTo])
		}
		return append(dst, op.Target)
	case TypeGit:
		switch op.Action {
		case ActionGitAdd, ActionGitReset, ActionGitCheckout:
			if op.Target != "" {
				return append(dst, op.Target)
			}
		}
	}
	return dst
}

func opLineStats(op Operation) (adds, dels int) {
	switch op.Action {
	case ActionCreate, ActionUpdate, ActionAppend:
		return countLines(op.Content), 0
	case ActionPatch:
		for _, l := range strings.Split(op.Content, "\n") {
			switch {
			case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "):
			case strings.HasPrefix(l, "+"):
				adds++
			case strings.HasPrefix(l, "-"):
				dels++
			}
		}
	}
	return adds, dels
}

func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// HasFlag reports whether the patch carries f.
func (p *Patch) HasFlag(f Flag) bool { return slices.Contains(p.Flags, f) }

// HasFlag reports whether the operation carries f.
func (o Operation) HasFlag(f Flag) bool { return slices.Contains(o.Flags, f) }
