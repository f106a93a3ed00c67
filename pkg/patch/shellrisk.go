package patch

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// ShellFinding is one risky construct found in a shell script, with the flag it raises and a
// short description of the command that raised it (for the approval message): Detail in
// English (logs, the audit log), Code and Args the same as a code of ShellTexts, which Text says
// in the reader's language.
type ShellFinding struct {
	Flag   Flag     `json:"flag"`
	Detail string   `json:"detail"`
	Code   string   `json:"code,omitempty"`
	Args   []string `json:"args,omitempty"`
}

// ShellReport is what AnalyzeShell found. A script that does not parse is reported with
// FlagShellUnparsed: what bash would run cannot be known, so it is high risk.
type ShellReport struct {
	Findings   []ShellFinding `json:"findings,omitempty"`
	ParseError string         `json:"parse_error,omitempty"`
}

// Flags are the distinct flags of the findings, sorted.
func (r ShellReport) Flags() []Flag {
	var out []Flag
	for _, f := range r.Findings {
		if !slices.Contains(out, f.Flag) {
			out = append(out, f.Flag)
		}
	}
	slices.Sort(out)
	return out
}

// Detail is the first finding's description for f, or "".
func (r ShellReport) Detail(f Flag) string {
	for _, x := range r.Findings {
		if x.Flag == f {
			return x.Detail
		}
	}
	return ""
}

// Finding is the first finding for f.
func (r ShellReport) Finding(f Flag) (ShellFinding, bool) {
	for _, x := range r.Findings {
		if x.Flag == f {
			return x, true
		}
	}
	return ShellFinding{}, false
}

// HighRisk: anything found, including a script that does not parse.
func (r ShellReport) HighRisk() bool { return len(r.Findings) > 0 }

// ShellScript is the script the executor hands to `bash -c` for a shell operation: the target,
// and the content appended as arguments when it differs (the seed's PatchCommand shape). Risk is
// judged on exactly this text.
func ShellScript(op Operation) string {
	line := strings.TrimSpace(op.Target)
	if c := strings.TrimSpace(op.Content); c != "" && c != line {
		if line == "" {
			return c
		}
		line += " " + c
	}
	return line
}

// maxShellDepth bounds how deep `bash -c '…'`, eval and trap strings are parsed again.
const maxShellDepth = 8

// AnalyzeShell parses script as bash and walks every simple command — in pipelines, lists,
// subshells, command and process substitutions, functions, here-documents and strings that are
// run again (`bash -c`, `sh -c`, eval, trap, `su -c`, `find -exec`, xargs) — through wrappers
// (env, sudo, command, exec, nohup, setsid, timeout, nice, xargs, busybox, …). A word is only
// read as a command when it is in command position, so `echo rm` or `grep curl file` raise
// nothing.
func AnalyzeShell(script string) ShellReport {
	a := &shellAnalyzer{}
	a.script(script, 0)
	return ShellReport{Findings: a.findings, ParseError: a.parseErr}
}

type shellAnalyzer struct {
	findings []ShellFinding
	parseErr string
	// netHits counts network findings, so a command can tell whether it (or a script it runs)
	// reached the network.
	netHits int
	// file is the script being walked: where its network commands are and what waits for that
	// answer. Each parsed string (bash -c '…') has its own, since positions are per parse.
	file *shellFile
}

// shellFile collects, for one parse, the offsets of commands that use the network and the
// checks that depend on them ("is the left side of this pipe a download?"). Resolving them
// after the walk keeps the analysis linear; walking each pipe's left side again would be
// exponential in the length of a pipeline.
type shellFile struct {
	netAt   []uint
	pending []pendingNet
}

type pendingNet struct {
	start, end uint
	code       string
	args       []string
	// ifNot is raised when the range has no network command (a script piped into sh is
	// dynamic; one that was downloaded is remote code).
	ifNot Flag
}

// maxFindings bounds the list; past it a flag already reported is not repeated.
const maxFindings = 32

// add records a finding of f: code of ShellTexts with args.
func (a *shellAnalyzer) add(f Flag, code string, args ...string) {
	detail := ShellTexts.Text("en", code, args...)
	if f == FlagNetwork {
		a.netHits++
	}
	seen := false
	for _, x := range a.findings {
		if x.Flag == f && (x.Detail == detail || len(a.findings) >= maxFindings) {
			return
		}
		seen = seen || x.Flag == f
	}
	if seen && len(a.findings) >= maxFindings {
		return
	}
	shown := make([]string, len(args))
	for i, arg := range args {
		shown[i] = clip(arg, 80)
	}
	a.findings = append(a.findings, ShellFinding{Flag: f, Detail: clip(detail, 80), Code: code, Args: shown})
}

// expectNet registers a check on the source range of n in the current parse.
func (a *shellAnalyzer) expectNet(n syntax.Node, ifNot Flag, code string, args ...string) {
	if a.file == nil || n == nil {
		return
	}
	a.file.pending = append(a.file.pending, pendingNet{start: n.Pos().Offset(), end: n.End().Offset(), code: code, args: args, ifNot: ifNot})
}

func (a *shellAnalyzer) resolve(f *shellFile) {
	slices.Sort(f.netAt)
	for _, p := range f.pending {
		i, _ := slices.BinarySearch(f.netAt, p.start)
		if i < len(f.netAt) && f.netAt[i] < p.end {
			a.add(FlagRemoteCode, p.code, p.args...)
		} else if p.ifNot != "" {
			a.add(p.ifNot, p.code, p.args...)
		}
	}
}

// script parses src and analyses it; a parse error is itself a finding.
func (a *shellAnalyzer) script(src string, depth int) {
	if depth > maxShellDepth {
		a.add(FlagDynamicCommand, ShellNestedTooDeep, strconv.Itoa(maxShellDepth))
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		if a.parseErr == "" {
			a.parseErr = err.Error()
		}
		a.add(FlagShellUnparsed, ShellDoesNotParse, err.Error())
		return
	}
	outer := a.file
	a.file = &shellFile{}
	a.walk(f, depth)
	a.resolve(a.file)
	a.file = outer
}

func (a *shellAnalyzer) walk(n syntax.Node, depth int) {
	syntax.Walk(n, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.Stmt:
			if x.Background || x.Coprocess || x.Disown {
				a.add(FlagBackground, ShellBackground, describeCmd(x.Cmd))
			}
			for _, r := range x.Redirs {
				a.redirect(r, x.Cmd, depth)
			}
		case *syntax.CallExpr:
			if len(x.Args) > 0 {
				before := a.netHits
				a.call(toWords(x.Args), depth)
				if a.netHits > before && a.file != nil {
					a.file.netAt = append(a.file.netAt, x.Pos().Offset())
				}
			}
		case *syntax.BinaryCmd:
			if x.Op == syntax.Pipe || x.Op == syntax.PipeAll {
				a.pipe(x, depth)
			}
		case *syntax.CoprocClause:
			a.add(FlagBackground, ShellCoproc)
		case *syntax.Lit:
			a.devNet(x, x.Value)
		case *syntax.SglQuoted:
			a.devNet(x, x.Value)
		}
		return true
	})
}

// devNet spots bash's /dev/tcp and /dev/udp pseudo-files, which open network connections.
func (a *shellAnalyzer) devNet(n syntax.Node, s string) {
	if strings.Contains(s, "/dev/tcp/") || strings.Contains(s, "/dev/udp/") {
		a.add(FlagNetwork, ShellNetPseudoFile, clip(s, 40))
		if a.file != nil {
			a.file.netAt = append(a.file.netAt, n.Pos().Offset())
		}
	}
}

// word is a command-line word: its text when it is a plain literal (quotes and escapes
// removed), and the node for words with expansions.
type word struct {
	s   string
	lit bool
	w   *syntax.Word
}

func toWords(ws []*syntax.Word) []word {
	out := make([]word, len(ws))
	for i, w := range ws {
		s, ok := literal(w)
		out[i] = word{s: s, lit: ok, w: w}
	}
	return out
}

func (w word) show() string {
	if w.lit {
		return w.s
	}
	if w.w == nil {
		return "?"
	}
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, w.w); err != nil {
		return "?"
	}
	return b.String()
}

// literal returns the value of a word made only of literal text and quotes, with quotes and
// escapes removed as bash would ("r”m", `\rm` and "rm" are all rm).
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(x.Value, false))
		case *syntax.SglQuoted:
			if x.Dollar && strings.ContainsRune(x.Value, '\\') {
				return "", false // $'\x72m': escapes decide the text
			}
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			for _, dp := range x.Parts {
				l, ok := dp.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(unescape(l.Value, true))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

func unescape(s string, dquoted bool) string {
	if !strings.ContainsRune(s, '\\') {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		n := s[i+1]
		switch {
		case n == '\n':
			i++
		case !dquoted || strings.IndexByte("$`\"\\", n) >= 0:
			b.WriteByte(n)
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// Command tables. Names are compared after taking the base name (/usr/bin/rm is rm).
var (
	deleteCmds     = set("rm", "rmdir", "unlink", "shred", "srm", "wipe", "truncate")
	permissionCmds = set("chmod", "chown", "chgrp", "setfacl", "chattr", "chcon")
	privilegeCmds  = set("sudo", "su", "doas", "pkexec", "runuser", "chroot", "nsenter", "unshare", "capsh")
	networkCmds    = set("curl", "wget", "nc", "ncat", "netcat", "socat", "ssh", "scp", "sftp", "rsync", "telnet",
		"ftp", "tftp", "lftp", "aria2c", "http", "https", "xh", "ping", "dig", "nslookup", "host", "whois",
		"npx", "bunx", "websocat", "openssl", "mosh", "sshpass")
	daemonCmds = set("setsid", "nohup", "disown", "daemonize", "at", "batch", "crontab", "systemd-run",
		"start-stop-daemon")
	shellCmds   = set("sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "fish", "csh", "tcsh", "rbash")
	interpCmds  = set("python", "python2", "python3", "perl", "ruby", "node", "nodejs", "deno", "bun", "php", "lua", "tclsh", "Rscript", "pwsh", "osascript")
	writeAllCmd = set("tee", "touch", "mkdir", "rm", "rmdir", "unlink", "shred", "truncate", "chmod", "chown",
		"chgrp", "setfacl", "chattr", "mkfifo", "mknod")
	writeLastCmd = set("cp", "mv", "install", "ln", "rsync", "scp")
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// call analyses one simple command given as words (the command name first).
func (a *shellAnalyzer) call(args []word, depth int) {
	if len(args) == 0 {
		return
	}
	name := args[0]
	if !name.lit || strings.ContainsAny(name.s, "*?[{}$`") || name.s == "" {
		a.add(FlagDynamicCommand, ShellComputedName, clip(name.show(), 40))
		return
	}
	base := path.Base(name.s)
	rest := args[1:]
	show := describe(args)

	if writeAllCmd[base] {
		a.writeTargets(operands(rest), show)
	}
	if writeLastCmd[base] {
		if ops := operands(rest); len(ops) > 0 {
			a.writeTargets(ops[len(ops)-1:], show)
		}
	}
	switch {
	case deleteCmds[base]:
		a.add(FlagDelete, ShellCommand, show)
	case base == "mv" || base == "rename":
		a.add(FlagRename, ShellCommand, show)
	case permissionCmds[base]:
		a.add(FlagPermission, ShellCommand, show)
	case networkCmds[base]:
		a.add(FlagNetwork, ShellCommand, show)
	}
	switch base {
	case "dd":
		for _, w := range rest {
			if v, ok := strings.CutPrefix(w.s, "of="); ok && w.lit {
				a.writeTargets([]word{{s: v, lit: true}}, show)
			}
		}
	case "git":
		a.git(rest, show)
	case "npm", "yarn", "pnpm", "bun", "pip", "pip3", "pipx", "uv", "cargo", "gem", "go", "poetry", "twine",
		"docker", "podman", "gh", "apt", "apt-get", "yum", "dnf", "apk", "brew", "bundle", "composer", "helm", "kubectl":
		a.tool(base, rest, show)
	case "python", "python2", "python3":
		a.python(rest, show)
	case "perl", "ruby", "node", "nodejs", "php", "lua", "deno":
		for _, w := range rest {
			if w.s == "-e" || w.s == "-E" || w.s == "-r" || w.s == "--eval" || w.s == "-p" && base != "perl" || w.s == "eval" && base == "deno" {
				a.add(FlagDynamicCommand, ShellInlineCode, show)
			}
		}
	case "eval":
		a.add(FlagDynamicCommand, ShellCommand, show)
		a.codeWords(rest, depth)
	case "trap":
		if len(rest) > 0 && !strings.HasPrefix(rest[0].s, "-") {
			a.codeWords(rest[:1], depth)
		}
	case "alias", "enable":
		a.add(FlagDynamicCommand, ShellCommand, show)
	case "source", ".":
		if len(rest) > 0 {
			a.scriptSource(rest[0], show, depth)
		}
	case "sudo", "doas", "pkexec", "runuser":
		a.add(FlagPrivilege, ShellCommand, show)
		i := skipOptions(rest, set("-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "-c", "--user", "--group", "--chdir", "--prompt", "--role", "--type", "--close-from", "--other-user", "--command-timeout"), true)
		if base == "runuser" || base == "su" {
			a.suCommand(rest, depth)
		}
		a.call(rest[i:], depth)
	case "su":
		a.add(FlagPrivilege, ShellCommand, show)
		a.suCommand(rest, depth)
	case "chroot":
		a.add(FlagPrivilege, ShellCommand, show)
		if i := skipOptions(rest, set("--userspec", "--groups"), false); i < len(rest) {
			a.call(rest[i+1:], depth)
		}
	case "setsid", "nohup", "daemonize", "systemd-run", "start-stop-daemon":
		a.add(FlagBackground, ShellCommand, show)
		a.call(rest[skipOptions(rest, set("-p", "--property", "-u", "--unit", "--exec", "-x", "--startas", "-a"), false):], depth)
	case "disown", "at", "batch", "crontab":
		a.add(FlagBackground, ShellCommand, show)
	case "screen", "tmux":
		for _, w := range rest {
			if strings.HasPrefix(w.s, "-d") || w.s == "-D" {
				a.add(FlagBackground, ShellCommand, show)
			}
		}
	case "env":
		a.env(rest, depth)
	case "command":
		for _, w := range rest {
			if w.s == "-v" || w.s == "-V" {
				return // a lookup, nothing runs
			}
		}
		a.call(rest[skipOptions(rest, nil, false):], depth)
	case "builtin", "exec", "nice", "ionice", "stdbuf", "time", "unbuffer", "caffeinate", "chrt", "taskset", "prlimit", "setpriv", "flock", "faketime":
		a.call(rest[skipOptions(rest, set("-a", "-n", "-c", "-p", "-i", "-o", "-e", "--adjustment", "--class", "--classdata"), false):], depth)
	case "timeout":
		i := skipOptions(rest, set("-s", "--signal", "-k", "--kill-after"), false)
		if i < len(rest) {
			a.call(rest[i+1:], depth) // after the duration
		}
	case "watch":
		i := skipOptions(rest, set("-n", "--interval", "-d", "--differences"), false)
		a.codeWords(rest[i:], depth)
	case "xargs", "parallel":
		i := skipOptions(rest, set("-I", "-i", "-n", "-P", "-d", "-E", "-e", "-L", "-l", "-s", "-a", "--arg-file",
			"--delimiter", "--max-args", "--max-procs", "--max-lines", "--replace", "--eof", "-j", "--jobs"), false)
		a.call(rest[i:], depth)
	case "busybox", "toybox":
		a.call(rest, depth)
	case "find":
		a.find(rest, depth)
	}
	if shellCmds[base] {
		a.shell(rest, show, depth)
	}
}

// skipOptions returns the index of the first operand: options (with their argument for the
// names in withArg), "--", and with assigns also NAME=value words are skipped. A computed word
// stops the scan, so it is analysed as the command.
func skipOptions(args []word, withArg map[string]bool, assigns bool) int {
	i := 0
	for i < len(args) {
		w := args[i]
		switch {
		case !w.lit:
			return i
		case w.s == "--":
			return i + 1
		case strings.HasPrefix(w.s, "-") && len(w.s) > 1:
			if withArg[w.s] {
				i++
			}
			i++
		case assigns && isAssign(w.s):
			i++
		default:
			return i
		}
	}
	return i
}

func isAssign(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		if r != '_' && !(r >= 'a' && r <= 'z') && !(r >= 'A' && r <= 'Z') && !(i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// operands are the words that are not options.
func operands(args []word) []word {
	var out []word
	opts := true
	for _, w := range args {
		if opts && w.lit && w.s == "--" {
			opts = false
			continue
		}
		if opts && w.lit && strings.HasPrefix(w.s, "-") && len(w.s) > 1 {
			continue
		}
		out = append(out, w)
	}
	return out
}

// writeTargets checks paths a command writes: outside the workspace or into git internals.
func (a *shellAnalyzer) writeTargets(ws []word, show string) {
	for _, w := range ws {
		if !w.lit {
			continue
		}
		if outsideWorkspace(w.s) {
			a.add(FlagOutsideWorkspace, ShellCommand, show)
		}
		if TouchesGitDir(w.s) {
			a.add(FlagGitInternals, ShellCommand, show)
		}
	}
}

// harmlessDevices may be written from anywhere.
var harmlessDevices = set("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero")

// outsideWorkspace: absolute paths (other than harmless devices), home-relative paths and
// paths whose ".." components climb above the working directory.
func outsideWorkspace(p string) bool {
	switch {
	case p == "":
		return false
	case harmlessDevices[p] || strings.HasPrefix(p, "/dev/fd/"):
		return false
	case strings.HasPrefix(p, "/dev/tcp/") || strings.HasPrefix(p, "/dev/udp/"):
		return false // a connection, reported as network
	case strings.HasPrefix(p, "/"), strings.HasPrefix(p, "~"):
		return true
	}
	c := path.Clean(p)
	return c == ".." || strings.HasPrefix(c, "../")
}

func (a *shellAnalyzer) redirect(r *syntax.Redirect, cmd syntax.Command, depth int) {
	write := false
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.RdrInOut,
		syntax.RdrAllClob, syntax.AppAllClob:
		write = true
	case syntax.DplOut:
		// >&2 and >&- duplicate descriptors; >&file writes a file.
		if s, ok := literal(r.Word); !ok || !isFD(s) {
			write = true
		}
	}
	if !write || r.Word == nil {
		return
	}
	target, ok := literal(r.Word)
	if !ok {
		a.add(FlagOutsideWorkspace, ShellComputedPath, clip(word{w: r.Word}.show(), 40))
		return
	}
	if outsideWorkspace(target) {
		a.add(FlagOutsideWorkspace, ShellRedirect, target)
	}
	if TouchesGitDir(target) {
		a.add(FlagGitInternals, ShellRedirect, target)
	}
	// "> file", ": > file" and "true > file" only empty the file.
	if (r.Op == syntax.RdrOut || r.Op == syntax.RdrClob || r.Op == syntax.RdrAll) && !harmlessDevices[target] && truncatingCmd(cmd) {
		a.add(FlagDelete, ShellTruncates, target)
	}
}

func isFD(s string) bool {
	if s == "-" {
		return true
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

func truncatingCmd(cmd syntax.Command) bool {
	if cmd == nil {
		return true
	}
	c, ok := cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 {
		return ok
	}
	name, lit := literal(c.Args[0])
	if !lit {
		return false
	}
	switch name {
	case ":", "true", "false":
		return len(c.Args) == 1
	case "cat":
		return len(c.Args) == 2 && wordIs(c.Args[1], "/dev/null")
	}
	return false
}

func wordIs(w *syntax.Word, s string) bool {
	v, ok := literal(w)
	return ok && v == s
}

// codeWords analyses words that are run again as a script (eval, trap, watch): joined with
// spaces when literal; a computed one is dynamic, and remote code when it fetches from the
// network.
func (a *shellAnalyzer) codeWords(ws []word, depth int) {
	parts := make([]string, 0, len(ws))
	for _, w := range ws {
		if !w.lit {
			a.computedCode(w, ShellCodeAtRunTime, clip(w.show(), 40))
			return
		}
		parts = append(parts, w.s)
	}
	if len(parts) > 0 {
		a.script(strings.Join(parts, " "), depth+1)
	}
}

// computedCode: code whose text is only known at run time.
func (a *shellAnalyzer) computedCode(w word, code string, args ...string) {
	a.add(FlagDynamicCommand, code, args...)
	if w.w != nil {
		a.expectNet(w.w, "", code, args...)
	}
}

// scriptSource: `source x`, `bash x`: a process substitution that downloads is remote code.
func (a *shellAnalyzer) scriptSource(w word, show string, depth int) {
	if w.lit || w.w == nil {
		return
	}
	for _, p := range w.w.Parts {
		if _, ok := p.(*syntax.ProcSubst); ok {
			a.computedCode(w, ShellProcessSubst, show)
			return
		}
	}
}

// shell handles sh/bash/...: `-c script` is parsed again; a script file is not ours to read.
func (a *shellAnalyzer) shell(args []word, show string, depth int) {
	cmdMode := false
	i := 0
	for i < len(args) {
		w := args[i]
		if !w.lit {
			break
		}
		if w.s == "--" {
			i++
			break
		}
		if !strings.HasPrefix(w.s, "-") && !strings.HasPrefix(w.s, "+") || w.s == "-" {
			break
		}
		switch {
		case w.s == "-o" || w.s == "+o" || w.s == "-O" || w.s == "+O" || w.s == "--rcfile" || w.s == "--init-file":
			i++
		case !strings.HasPrefix(w.s, "--") && strings.ContainsRune(w.s, 'c'):
			cmdMode = true
		}
		i++
	}
	if cmdMode {
		if i >= len(args) {
			return
		}
		if args[i].lit {
			a.script(args[i].s, depth+1)
		} else {
			a.computedCode(args[i], ShellRunsCodeAtRunTime, show)
		}
		return
	}
	if i < len(args) {
		a.scriptSource(args[i], show, depth)
	}
}

func (a *shellAnalyzer) suCommand(args []word, depth int) {
	for i, w := range args {
		if (w.s == "-c" || w.s == "--command" || w.s == "--session-command") && i+1 < len(args) {
			a.codeWords(args[i+1:i+2], depth)
		}
	}
}

func (a *shellAnalyzer) env(args []word, depth int) {
	i := 0
	for i < len(args) {
		w := args[i]
		switch {
		case !w.lit:
			a.call(args[i:], depth)
			return
		case w.s == "-S" || w.s == "--split-string":
			if i+1 < len(args) {
				a.codeWords(args[i+1:], depth)
			}
			return
		case strings.HasPrefix(w.s, "-S") || strings.HasPrefix(w.s, "--split-string="):
			v := strings.TrimPrefix(strings.TrimPrefix(w.s, "--split-string="), "-S")
			a.codeWords(append([]word{{s: v, lit: true}}, args[i+1:]...), depth)
			return
		case w.s == "-u" || w.s == "--unset" || w.s == "-C" || w.s == "--chdir":
			i += 2
		case w.s == "--":
			i++
		case strings.HasPrefix(w.s, "-") && len(w.s) > 1, isAssign(w.s):
			i++
		default:
			a.call(args[i:], depth)
			return
		}
	}
}

// git: global options, then the subcommand.
func (a *shellAnalyzer) git(args []word, show string) {
	i := 0
	for i < len(args) {
		w := args[i]
		if !w.lit {
			a.add(FlagDynamicCommand, ShellGitComputed, show)
			return
		}
		switch {
		case w.s == "-c" || strings.HasPrefix(w.s, "--config-env"):
			// Configuration on the command line can name programs to run (core.fsmonitor,
			// core.sshCommand, aliases with "!").
			a.add(FlagDynamicCommand, ShellGitConfig, show)
			i += 2
		case w.s == "-C" || w.s == "--git-dir" || w.s == "--work-tree" || w.s == "--namespace" || w.s == "--super-prefix":
			if w.s != "-C" && i+1 < len(args) {
				a.writeTargets(args[i+1:i+2], show)
			}
			i += 2
		case strings.HasPrefix(w.s, "--exec-path="), strings.HasPrefix(w.s, "--git-dir="), strings.HasPrefix(w.s, "--work-tree="):
			a.writeTargets([]word{{s: w.s[strings.IndexByte(w.s, '=')+1:], lit: true}}, show)
			i++
		case strings.HasPrefix(w.s, "-"):
			i++
		default:
			a.gitSub(w.s, args[i+1:], show)
			return
		}
	}
}

func (a *shellAnalyzer) gitSub(sub string, rest []word, show string) {
	switch sub {
	case "push", "send-email", "request-pull":
		a.add(FlagNetwork, ShellCommand, show)
		a.add(FlagPushPublic, ShellCommand, show)
	case "fetch", "pull", "clone", "ls-remote", "fetch-pack", "send-pack", "archive", "svn", "p4":
		if sub != "archive" || slices.ContainsFunc(rest, func(w word) bool { return strings.HasPrefix(w.s, "--remote") }) {
			a.add(FlagNetwork, ShellCommand, show)
		}
	case "remote", "submodule":
		if ops := operands(rest); len(ops) > 0 && (ops[0].s == "update" || ops[0].s == "prune" || ops[0].s == "show" && len(ops) > 1 || ops[0].s == "add" && sub == "submodule" || ops[0].s == "sync") {
			a.add(FlagNetwork, ShellCommand, show)
		}
	case "rm", "clean":
		a.add(FlagDelete, ShellCommand, show)
	case "mv":
		a.add(FlagRename, ShellCommand, show)
	}
}

// tool: package managers, container and cloud clients: downloads are network, uploads publish.
func (a *shellAnalyzer) tool(base string, rest []word, show string) {
	ops := operands(rest)
	sub := ""
	if len(ops) > 0 {
		sub = ops[0].s
	}
	second := ""
	if len(ops) > 1 {
		second = ops[1].s
	}
	network, publish := false, false
	switch base {
	case "npm", "yarn", "pnpm", "bun":
		switch sub {
		case "", "install", "i", "add", "ci", "update", "upgrade", "up", "dlx", "exec", "x", "create", "init", "outdated", "audit", "view", "info":
			network = !(sub == "" && base == "npm")
		case "publish", "unpublish", "deprecate", "dist-tag", "owner":
			network, publish = true, true
		}
	case "pip", "pip3", "pipx", "uv":
		network = sub == "install" || sub == "download" || sub == "sync" || sub == "add" || sub == "lock" || sub == "run" && base == "pipx"
		publish = sub == "publish"
		network = network || publish
	case "cargo":
		network = sub == "install" || sub == "fetch" || sub == "search" || sub == "update" || sub == "add"
		publish = sub == "publish" || sub == "yank" || sub == "owner"
		network = network || publish
	case "gem":
		network = sub == "install" || sub == "fetch" || sub == "update" || sub == "search"
		publish = sub == "push" || sub == "yank" || sub == "owner"
		network = network || publish
	case "go":
		network = sub == "get" || sub == "mod" && second == "download" || sub == "install" && slices.ContainsFunc(ops, func(w word) bool { return strings.Contains(w.s, "@") })
	case "poetry":
		network = sub == "install" || sub == "add" || sub == "update" || sub == "lock"
		publish = sub == "publish"
		network = network || publish
	case "twine":
		publish, network = sub == "upload", true
	case "docker", "podman":
		// The container daemon's socket is root-equivalent.
		a.add(FlagPrivilege, ShellCommand, show)
		network = sub == "pull" || sub == "push" || sub == "login" || sub == "run" || sub == "build"
		publish = sub == "push"
	case "gh", "helm", "kubectl":
		network = true
		publish = base == "gh" && (sub == "release" || sub == "gist" || sub == "repo" || sub == "pr" || sub == "issue") ||
			base == "helm" && sub == "push"
	case "apt", "apt-get", "yum", "dnf", "apk", "brew":
		network = sub == "install" || sub == "update" || sub == "upgrade" || sub == "add" || sub == "fetch" || sub == "download"
	case "bundle", "composer":
		network = sub == "" || sub == "install" || sub == "update" || sub == "require"
	}
	if network {
		a.add(FlagNetwork, ShellCommand, show)
	}
	if publish {
		a.add(FlagPushPublic, ShellCommand, show)
	}
}

func (a *shellAnalyzer) python(rest []word, show string) {
	for i, w := range rest {
		switch {
		case w.s == "-c":
			a.add(FlagDynamicCommand, ShellInlineCode, show)
			return
		case w.s == "-m" && i+1 < len(rest):
			switch rest[i+1].s {
			case "http.server", "SimpleHTTPServer", "smtpd", "ftplib", "xmlrpc.server", "aiosmtpd":
				a.add(FlagNetwork, ShellCommand, show)
			case "pip":
				a.tool("pip", rest[i+2:], show)
			}
			return
		case !strings.HasPrefix(w.s, "-"):
			return // a script file
		}
	}
}

// find: -delete deletes, -exec/-ok run a command per file.
func (a *shellAnalyzer) find(args []word, depth int) {
	for i := 0; i < len(args); i++ {
		switch args[i].s {
		case "-delete":
			a.add(FlagDelete, ShellCommand, "find -delete")
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j].s != ";" && args[j].s != "+" {
				j++
			}
			a.call(args[i+1:j], depth)
			i = j
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 < len(args) {
				a.writeTargets(args[i+1:i+2], "find "+args[i].s)
			}
		}
	}
}

// pipe: a downloader piped into an interpreter that reads its program from stdin is remote
// code; any script piped into an interpreter is code unknown until run time.
func (a *shellAnalyzer) pipe(b *syntax.BinaryCmd, depth int) {
	c, ok := b.Y.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 {
		return
	}
	args := unwrapForPipe(toWords(c.Args))
	if len(args) == 0 || !args[0].lit {
		return
	}
	base := path.Base(args[0].s)
	if !shellCmds[base] && !interpCmds[base] {
		return
	}
	for _, w := range args[1:] {
		if !w.lit {
			return
		}
		if w.s == "-" || w.s == "/dev/stdin" || w.s == "-s" {
			break
		}
		if w.s == "-c" || w.s == "-e" || w.s == "-m" || !strings.HasPrefix(w.s, "-") {
			return // the program comes from an argument, stdin is data
		}
	}
	a.expectNet(b.X, FlagDynamicCommand, ShellPipesInto, base)
}

func unwrapForPipe(ws []word) []word {
	for len(ws) > 0 && ws[0].lit {
		switch path.Base(ws[0].s) {
		case "sudo", "doas", "env", "command", "exec", "nice", "nohup", "time", "stdbuf":
			ws = ws[1:]
			ws = ws[skipOptions(ws, set("-u", "-g", "-n"), true):]
		default:
			return ws
		}
	}
	return ws
}

func describe(args []word) string {
	parts := make([]string, 0, 4)
	for i, w := range args {
		if i == 4 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, w.show())
	}
	return strings.Join(parts, " ")
}

// describeCmd names a command cheaply: the first words of a simple command, else its kind.
func describeCmd(c syntax.Command) string {
	switch x := c.(type) {
	case *syntax.CallExpr:
		return describe(toWords(x.Args))
	case nil:
		return "?"
	case *syntax.Subshell:
		return "( … )"
	case *syntax.Block:
		return "{ … }"
	default:
		return strings.TrimPrefix(fmt.Sprintf("%T", c), "*syntax.")
	}
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len([]rune(s)) > n {
		return string([]rune(s)[:n]) + "…"
	}
	return s
}

// ShellAutomation is whether a shell script may run without a person under a grant that
// allows shell: it parses, raises no finding, and every command it runs is on a short list of
// commands that neither run other code nor write anywhere but where the script says. Writes
// are the paths it may write as written in the script (redirection targets, mkdir and touch
// operands, cp's destination); the caller checks them against its scope. When OK is false,
// Reason says why in English and Writes is empty; ReasonCode and ReasonArgs say it as a code of
// ShellTexts (ReasonIn, ShellText).
type ShellAutomation struct {
	OK         bool     `json:"ok"`
	Reason     string   `json:"reason,omitempty"`
	ReasonCode string   `json:"reason_code,omitempty"`
	ReasonArgs []string `json:"reason_args,omitempty"`
	Writes     []string `json:"writes,omitempty"`
}

// AnalyzeShellAutomation decides ShellAutomation for script. Anything not known to be safe
// is not automatable: other programs, interpreters, build tools, ./scripts and any command
// named by a path, editors of files in place (sed, awk, tar), variable assignments (PATH=…),
// function definitions, and writes to computed or pattern paths.
func AnalyzeShellAutomation(script string) ShellAutomation {
	if r := AnalyzeShell(script); r.HighRisk() {
		f := r.Findings[0]
		return ShellAutomation{Reason: fmt.Sprintf("risky construct (%s): %s", f.Flag, f.Detail),
			ReasonCode: AutoRisky, ReasonArgs: append([]string{string(f.Flag), f.Code}, f.Args...)}
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil {
		return ShellAutomation{Reason: ShellTexts.Text("en", AutoDoesNotParse), ReasonCode: AutoDoesNotParse}
	}
	c := &autoCheck{}
	syntax.Walk(f, c.visit)
	if c.reason != "" {
		return ShellAutomation{Reason: c.reason, ReasonCode: c.code, ReasonArgs: c.args}
	}
	return ShellAutomation{OK: true, Writes: c.writes}
}

// autoCommands run without a person when their arguments pass the check in autoCheck.call.
var autoCommands = set("ls", "cat", "head", "tail", "wc", "grep", "rg", "sort", "uniq", "cut", "tr", "diff",
	"cmp", "echo", "printf", "true", "false", ":", "test", "[", "pwd", "basename", "dirname", "stat", "date",
	"find", "mkdir", "touch", "cp")

type autoCheck struct {
	// reason is the first refusal in English, code and args the same as a code of ShellTexts.
	reason string
	code   string
	args   []string
	writes []string
}

func (c *autoCheck) deny(code string, args ...string) {
	if c.reason == "" {
		c.reason = clip(ShellTexts.Text("en", code, args...), 120)
		c.code = code
		for _, a := range args {
			c.args = append(c.args, clip(a, 120))
		}
	}
}

func (c *autoCheck) visit(n syntax.Node) bool {
	if c.reason != "" {
		return false
	}
	switch x := n.(type) {
	case *syntax.Stmt:
		for _, r := range x.Redirs {
			c.redirect(r)
		}
	case *syntax.CallExpr:
		if len(x.Assigns) > 0 {
			c.deny(AutoSetsVariables, describeCmd(x))
		} else if len(x.Args) > 0 {
			c.call(toWords(x.Args))
		}
	case *syntax.DeclClause:
		c.deny(AutoSetsVariables, x.Variant.Value)
	case *syntax.FuncDecl:
		c.deny(AutoDefinesFunction)
	case *syntax.ForClause:
		if it, ok := x.Loop.(*syntax.WordIter); ok && !plainLoopVar(it.Name.Value) {
			c.deny(AutoLoopVariable, it.Name.Value)
		}
	case *syntax.ParamExp:
		if x.Exp != nil && (x.Exp.Op == syntax.AssignUnset || x.Exp.Op == syntax.AssignUnsetOrNull) {
			c.deny(AutoAssignsInExpand)
		}
	}
	return true
}

// plainLoopVar: a lower-case name, so a loop cannot set PATH, IFS or another variable that
// changes what later commands run.
func plainLoopVar(name string) bool {
	for i, r := range name {
		if r != '_' && !(r >= 'a' && r <= 'z') && !(i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return name != ""
}

func (c *autoCheck) redirect(r *syntax.Redirect) {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.RdrInOut,
		syntax.RdrAllClob, syntax.AppAllClob:
	case syntax.DplOut:
		if s, ok := literal(r.Word); ok && isFD(s) {
			return
		}
	default:
		return
	}
	if r.Word == nil {
		return
	}
	target, ok := literal(r.Word)
	if !ok {
		c.deny(ShellComputedPath, word{w: r.Word}.show())
		return
	}
	if !harmlessDevices[target] {
		c.write(target)
	}
}

func (c *autoCheck) write(p string) {
	if p == "" || strings.ContainsAny(p, "*?[]{}~$`\\") {
		c.deny(AutoExpandedPath, strconv.Quote(p))
		return
	}
	c.writes = append(c.writes, p)
}

// call checks one simple command. Options that run programs or write files are refused, and
// for commands that have such options every argument must be literal (an expansion may turn
// into one).
func (c *autoCheck) call(args []word) {
	for len(args) > 0 && args[0].lit && (args[0].s == "command" || args[0].s == "builtin" || args[0].s == "exec" || args[0].s == "nice") {
		args = args[1:]
		args = args[skipOptions(args, set("-n", "--adjustment", "-a"), false):]
	}
	if len(args) == 0 {
		return
	}
	name, rest := args[0], args[1:]
	switch {
	case !name.lit || name.s == "":
		c.deny(ShellComputedName, name.show())
		return
	case strings.Contains(name.s, "/"):
		c.deny(AutoProgramByPath, name.s)
		return
	case !autoCommands[name.s]:
		c.deny(AutoNotListed, name.s)
		return
	}
	switch name.s {
	case "printf":
		if len(rest) > 0 && (!rest[0].lit || strings.HasPrefix(rest[0].s, "-v")) {
			c.deny(AutoPrintfSetsVar)
		}
	case "date":
		c.forbidOptions(name.s, rest, "s", "--set")
	case "sort":
		c.forbidOptions(name.s, rest, "oT", "--output", "--compress-program", "--temporary-directory")
	case "rg":
		c.forbidOptions(name.s, rest, "z", "--pre", "--search-zip", "--hostname-bin")
	case "uniq":
		// uniq IN OUT writes OUT.
		c.forbidOptions(name.s, rest, "")
		if len(operands(rest)) > 1 {
			c.deny(AutoUniqOutput)
		}
	case "find":
		for _, w := range rest {
			if !w.lit {
				c.deny(AutoComputedArgument, "find", w.show())
				return
			}
			switch w.s {
			case "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls":
				c.deny(AutoOption, "find", w.s)
			}
		}
	case "mkdir":
		for _, w := range c.strictOperands(name.s, rest, "pv", "--parents", "--verbose") {
			c.write(w)
		}
	case "touch":
		for _, w := range c.strictOperands(name.s, rest, "acmh", "--no-create", "--no-dereference") {
			c.write(w)
		}
	case "cp":
		ops := c.strictOperands(name.s, rest, "aRrfinpuvTLPHdx", "--recursive", "--archive", "--force",
			"--interactive", "--no-clobber", "--update", "--verbose", "--parents", "--dereference",
			"--no-dereference", "--no-target-directory", "--preserve", "--preserve=", "--no-preserve=")
		if len(ops) > 1 {
			c.write(ops[len(ops)-1])
		}
	}
}

// forbidOptions refuses computed arguments and the given short option letters (anywhere in a
// cluster) and long options (also abbreviated, as getopt accepts them).
func (c *autoCheck) forbidOptions(name string, args []word, short string, long ...string) {
	for _, w := range args {
		if !w.lit {
			c.deny(AutoComputedArgument, name, w.show())
			return
		}
		switch {
		case strings.HasPrefix(w.s, "--") && w.s != "--":
			opt, _, _ := strings.Cut(w.s, "=")
			for _, l := range long {
				if strings.HasPrefix(l, opt) {
					c.deny(AutoOption, name, opt)
				}
			}
		case strings.HasPrefix(w.s, "-") && short != "" && strings.ContainsAny(w.s[1:], short):
			c.deny(AutoOption, name, w.s)
		}
	}
}

// strictOperands returns the operands of a command that writes them, allowing only the given
// option letters and long options (a long option ending in "=" allows NAME=value), so an
// option taking an argument cannot hide the real target.
func (c *autoCheck) strictOperands(name string, args []word, short string, long ...string) []string {
	var out []string
	opts := true
	for _, w := range args {
		switch {
		case !w.lit:
			c.deny(AutoComputedArgument, name, w.show())
			return nil
		case opts && w.s == "--":
			opts = false
		case opts && strings.HasPrefix(w.s, "--"):
			opt, _, hasValue := strings.Cut(w.s, "=")
			if !slices.Contains(long, w.s) && !(hasValue && slices.Contains(long, opt+"=")) {
				c.deny(AutoOption, name, w.s)
				return nil
			}
		case opts && strings.HasPrefix(w.s, "-") && len(w.s) > 1:
			if strings.Trim(w.s[1:], short) != "" {
				c.deny(AutoOption, name, w.s)
				return nil
			}
		default:
			out = append(out, w.s)
		}
	}
	return out
}
