package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// MaybeRunInit turns this process into the sandbox init when it was started as one, and never
// returns then; otherwise it returns at once. Call it first thing in main (and in TestMain of
// tests that run the executor in-process).
func MaybeRunInit() {
	if len(os.Args) == 0 || os.Args[0] != initArg0 {
		return
	}
	os.Exit(runInit())
}

// runInit is PID 1 of the command's PID namespace. Every step runs on one locked OS thread:
// capabilities, no_new_privs and the Landlock domain are per thread and the command is forked
// from this thread, so it inherits exactly them.
func runInit() int {
	runtime.LockOSThread() // never unlocked: the thread ends with the process
	status := os.NewFile(4, "status")
	st := initMain(os.NewFile(3, "spec"))
	// The executor takes the report as the end of the command: by now every process of the
	// namespace is gone, and closing the output lets it stop reading at once, without waiting
	// for the kernel to tear the namespaces down.
	for fd := 0; fd <= 2; fd++ {
		_ = syscall.Close(fd)
	}
	_ = json.NewEncoder(status).Encode(st)
	_ = status.Close()
	if !st.Started {
		return 125
	}
	return 0
}

func initMain(specFile *os.File) Status {
	fail := func(step string, err error) Status {
		return Status{ExitCode: -1, Error: fmt.Sprintf("sandbox: %s: %v", step, err)}
	}
	if os.Getpid() != 1 {
		return fail("init", errors.New("not the first process of a new PID namespace"))
	}
	syscall.CloseOnExec(3)
	syscall.CloseOnExec(4)
	var sp spec
	data, err := io.ReadAll(io.LimitReader(specFile, 16<<20))
	_ = specFile.Close()
	if err == nil {
		err = json.Unmarshal(data, &sp)
	}
	if err != nil || len(sp.Argv) == 0 {
		return fail("read command", fmt.Errorf("%v (%d bytes)", err, len(data)))
	}
	// Not dumpable: the command cannot read the init's memory or open its /proc files.
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	if err := setupMounts(sp); err != nil {
		return fail("mounts", err)
	}
	if sp.Network != NetworkAllow {
		if err := loopbackUp(); err != nil {
			return fail("loopback", err)
		}
	}
	_ = unix.Sethostname([]byte("sandbox"))
	env := sandboxEnv(sp.Env)
	path, err := lookPath(sp.Argv[0], env)
	if err != nil {
		return Status{Started: false, ExitCode: 127, Error: fmt.Sprintf("sandbox: %s: %v", sp.Argv[0], err)}
	}
	if err := dropPrivileges(); err != nil {
		return fail("capabilities", err)
	}
	if err := applyLandlock(sp); err != nil {
		return fail("landlock", err)
	}
	if err := setLimits(sp.Limits); err != nil {
		return fail("rlimits", err)
	}
	pid, err := syscall.ForkExec(path, sp.Argv, &syscall.ProcAttr{
		Dir: sp.Dir, Env: env, Files: []uintptr{0, 1, 2},
		Sys: &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		code := 126
		if errors.Is(err, syscall.ENOENT) {
			code = 127
		}
		return Status{ExitCode: code, Error: fmt.Sprintf("start %s: %v", sp.Argv[0], err)}
	}
	// PID 1 inherits every orphan: reap them all until the command itself ends. Returning
	// then ends the namespace, and the kernel kills whatever is still in it.
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return Status{Started: true, ExitCode: -1, Error: "wait: " + err.Error()}
		}
		if got != pid {
			continue
		}
		killAll()
		if ws.Signaled() {
			return Status{Started: true, ExitCode: -1, Signal: int(ws.Signal())}
		}
		return Status{Started: true, ExitCode: ws.ExitStatus()}
	}
}

// killAll kills every other process of the namespace (kill(-1) from PID 1 spares only PID 1)
// and reaps them, so nothing of the command is left when the init reports.
func killAll() {
	_ = syscall.Kill(-1, syscall.SIGKILL)
	for {
		_, err := syscall.Wait4(-1, nil, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return
		}
	}
}

// maskedDirs are covered by an empty tmpfs: besides what Landlock denies, this hides every
// pathname Unix socket (Postgres, Redis, Docker, D-Bus) that lives below them, since
// connecting to one is not a file access Landlock controls before ABI 9.
var maskedDirs = []string{"/tmp", "/run", "/var", "/home", "/root", "/srv", "/mnt", "/media", "/opt", "/dev/shm"}

func setupMounts(sp spec) error {
	// Nothing done here may reach the host's mount table.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	wsfd, err := unix.Open(sp.Workspace, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open workspace: %w", err)
	}
	defer unix.Close(wsfd)
	var gitfd = -1
	if !sp.GitDirWritable {
		git := filepath.Join(sp.Workspace, ".git")
		if fi, err := os.Lstat(git); err == nil && fi.IsDir() {
			if gitfd, err = unix.Open(git, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err != nil {
				return fmt.Errorf("open .git: %w", err)
			}
			defer unix.Close(gitfd)
		}
	}
	covered := false
	for _, d := range maskedDirs {
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() {
			continue
		}
		opts := "mode=0755,size=1m"
		if d == "/tmp" {
			opts = fmt.Sprintf("mode=1777,size=%d", max(sp.Limits.TmpBytes, 1<<20))
		}
		if err := unix.Mount("tmpfs", d, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
			return fmt.Errorf("tmpfs on %s: %w", d, err)
		}
		if within(sp.Workspace, d) {
			covered = true
		}
		if d == "/var" {
			// Programs expect these to exist; both are empty here.
			_ = os.Mkdir("/var/tmp", 0o1777)
			_ = os.Symlink("/run", "/var/run")
		}
	}
	if covered {
		// The workspace was below a masked directory: put it back at its own path.
		if err := os.MkdirAll(sp.Workspace, 0o755); err != nil {
			return fmt.Errorf("workspace mount point: %w", err)
		}
	}
	// A bind of the workspace onto itself (or onto its recreated mount point) in every case,
	// so the .git remount below stays inside this namespace's own mounts.
	if err := unix.Mount(fmt.Sprintf("/proc/self/fd/%d", wsfd), sp.Workspace, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind workspace: %w", err)
	}
	if gitfd >= 0 {
		git := filepath.Join(sp.Workspace, ".git")
		if err := unix.Mount(fmt.Sprintf("/proc/self/fd/%d", gitfd), git, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind .git: %w", err)
		}
		if err := unix.Mount("", git, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
			return fmt.Errorf("read-only .git: %w", err)
		}
	}
	// A fresh /proc for this PID namespace: only the sandbox's own processes are visible.
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	if err := os.Mkdir(sandboxHome, 0o700); err != nil {
		return fmt.Errorf("home: %w", err)
	}
	return nil
}

func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}

// sandboxHome is the command's private HOME, inside the private /tmp.
const sandboxHome = "/tmp/home"

// sandboxEnv points HOME (always) and TMPDIR (when passed) at the private /tmp.
func sandboxEnv(in []string) []string {
	out := make([]string, 0, len(in)+1)
	for _, kv := range in {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "HOME":
			continue
		case "TMPDIR":
			kv = "TMPDIR=/tmp"
		}
		out = append(out, kv)
	}
	return append(out, "HOME="+sandboxHome)
}

func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path := "/usr/local/bin:/usr/bin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New("command not found")
}

// loopbackUp brings up lo in the empty network namespace, so local tools can still talk to
// themselves; nothing outside the sandbox is reachable.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// dropPrivileges leaves the command without any capability, even when it runs as uid 0 of the
// namespace: an empty bounding and ambient set, an empty inheritable set, and securebits that
// stop execve from granting root its capabilities.
func dropPrivileges() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("drop bounding capability %d: %w", c, err)
		}
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	// linux/securebits.h: NOROOT, NOROOT_LOCKED, NO_SETUID_FIXUP, its lock, KEEP_CAPS_LOCKED.
	const bits = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<5
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, uintptr(bits), 0, 0, 0); err != nil {
		return fmt.Errorf("securebits: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// systemDirs are readable and executable: the programs and their libraries.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// etcFiles is the part of /etc programs need; the rest of /etc (the suite's config, keys,
// shadow files) stays out of reach.
var etcFiles = []string{"/etc/passwd", "/etc/group", "/etc/hosts", "/etc/hostname", "/etc/resolv.conf",
	"/etc/nsswitch.conf", "/etc/host.conf", "/etc/gai.conf", "/etc/services", "/etc/protocols",
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime", "/etc/timezone", "/etc/mime.types",
	"/etc/inputrc", "/etc/bash.bashrc", "/etc/profile", "/etc/environment", "/etc/os-release",
	"/etc/debian_version", "/etc/shells", "/etc/magic", "/etc/papersize"}

var etcDirs = []string{"/etc/ld.so.conf.d", "/etc/alternatives", "/etc/ssl", "/etc/ca-certificates",
	"/etc/pki", "/etc/ssh/ssh_config.d", "/etc/profile.d", "/etc/perl", "/etc/python3"}

// devFiles are the device nodes a command may read and write.
var devFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// applyLandlock restricts this thread (and so the command) to the workspace read-write, the
// private /tmp read-write, and system files read-only. With the host network, TCP connect is
// limited to the allowed ports and bind is denied. IPC scoping keeps abstract Unix sockets and
// signals inside the sandbox.
func applyLandlock(sp spec) error {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return fmt.Errorf("Landlock is not available in this kernel (%v)", err)
	}
	if err := networkNeedsABI(sp.Network, abi); err != nil {
		return err
	}
	cfg := landlock.V7
	if sp.Network != NetworkAllow {
		// The empty network namespace already isolates the network; local servers the
		// command starts on its own loopback keep working.
		cfg.HandledAccessNet = 0
	}
	cfg = cfg.BestEffort()
	rules := []landlock.Rule{
		landlock.RODirs(systemDirs...).IgnoreIfMissing(),
		landlock.ROFiles(etcFiles...).IgnoreIfMissing(),
		landlock.RODirs(etcDirs...).IgnoreIfMissing(),
		landlock.RODirs("/proc"),
		landlock.RWFiles(devFiles...).IgnoreIfMissing(),
		landlock.RWDirs(sp.Workspace).WithRefer(),
		landlock.RWDirs("/tmp").WithRefer(),
	}
	if sp.Network == NetworkAllow {
		for _, p := range sp.Ports {
			rules = append(rules, landlock.ConnectTCP(p))
		}
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return err
	}
	if fd < 0 {
		return errors.New("Landlock ruleset is empty on this kernel")
	}
	defer unix.Close(fd)
	if err := llsys.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

func setLimits(l Limits) error {
	for _, r := range []struct {
		res int
		v   uint64
	}{
		{unix.RLIMIT_CPU, l.CPUSeconds},
		{unix.RLIMIT_AS, l.MemoryBytes},
		{unix.RLIMIT_NPROC, l.Processes},
		{unix.RLIMIT_NOFILE, l.OpenFiles},
		{unix.RLIMIT_FSIZE, l.FileBytes},
		{unix.RLIMIT_CORE, 0},
	} {
		// syscall.Setrlimit (not unix.Setrlimit): the Go runtime would otherwise restore its
		// original open-files limit in the child.
		if err := syscall.Setrlimit(r.res, &syscall.Rlimit{Cur: r.v, Max: r.v}); err != nil {
			return fmt.Errorf("limit %d: %w", r.res, err)
		}
	}
	return nil
}
