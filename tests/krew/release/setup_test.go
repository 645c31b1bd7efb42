// Package release holds the release checks: the archives, checksums and Krew manifests that
// scripts/package wrote, every binary checked or run on this machine (qemu-user for linux/arm64,
// wine for windows/amd64, Mach-O structure for darwin), and the Krew manifests validated,
// installed and exercised with the real krew and kubectl. Each check is a named test (go test -run
// picks some).
//
// scripts/test-release builds the archives and runs these tests; scripts/test runs them for
// linux/amd64 only. Run by hand:
//
//	FIELDWISE_DIST=/path/to/dist FIELDWISE_PLATFORMS=linux/amd64 go test -v ./release
//
// Environment:
//
//	FIELDWISE_DIST       the directory scripts/package wrote (archives, SHA256SUMS, krew-manifests/); required
//	FIELDWISE_PLATFORMS  the platforms built into it (default "all": the five); the others' tests skip
//	KUBECONFIG           a running cluster for the checks that read from one (wine, completion of names)
//	FIELDWISE_NO_CLUSTER=1  skip those checks (said so); without it, CI=true and no cluster fails them
//	FIELDWISE_WINE       the wine loader (default: wine64 on PATH, else /usr/lib/wine/wine64)
package release

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// plugins are the three plugins, by their Krew names.
var plugins = []string{"safe-patch", "owners", "last-applied"}

// allPlatforms are the release platforms, os/arch.
var allPlatforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64"}

// The run's inputs and its scratch space, set once by TestMain.
var (
	root       string          // the repository
	dist       string          // FIELDWISE_DIST
	platforms  []string        // the platforms built into dist
	built      map[string]bool // platforms as a set
	version    string          // the release tag in the manifests, v0.1.0
	releaseURL string          // the archives' base URL in the manifests
	work       string          // this run's temporary directory
	cacheDir   string          // ${XDG_CACHE_HOME:-~/.cache}/fieldwise
)

func TestMain(m *testing.M) {
	if err := setup(); err != nil {
		fmt.Fprintf(os.Stderr, "release tests: %v\n", err)
		os.Exit(2)
	}
	code := m.Run()
	teardown()
	os.Exit(code)
}

func setup() error {
	var err error
	if root, err = filepath.Abs("../../.."); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(root, "krew-manifests")); err != nil {
		return fmt.Errorf("not run from tests/krew/release in the repository: %w", err)
	}
	dist = os.Getenv("FIELDWISE_DIST")
	if dist == "" {
		return errors.New("FIELDWISE_DIST is not set: it names the directory scripts/package wrote (scripts/test-release sets it)")
	}
	if dist, err = filepath.Abs(dist); err != nil {
		return err
	}
	switch p := os.Getenv("FIELDWISE_PLATFORMS"); p {
	case "", "all":
		platforms = allPlatforms
	default:
		platforms = strings.Fields(p)
	}
	built = map[string]bool{}
	for _, p := range platforms {
		built[p] = true
	}
	if !built["linux/amd64"] {
		return errors.New("FIELDWISE_PLATFORMS must include linux/amd64: the other binaries are compared with it")
	}
	manifest, err := os.ReadFile(filepath.Join(dist, "krew-manifests", "owners.yaml"))
	if err != nil {
		return fmt.Errorf("FIELDWISE_DIST=%s holds no rendered manifest: %w", dist, err)
	}
	if m := regexp.MustCompile(`(?m)^  version: (\S+)$`).FindSubmatch(manifest); m != nil {
		version = string(m[1])
	}
	if m := regexp.MustCompile(`(?m)^    uri: (\S+)/[^/\s]+$`).FindSubmatch(manifest); m != nil {
		releaseURL = string(m[1])
	}
	if version == "" || releaseURL == "" {
		return fmt.Errorf("%s/krew-manifests/owners.yaml has no version or uri", dist)
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return err
		}
		cache = filepath.Join(home, ".cache")
	}
	cacheDir = filepath.Join(cache, "fieldwise")
	if work, err = os.MkdirTemp("", "fieldwise-release."); err != nil {
		return err
	}
	return nil
}

func teardown() {
	deleteClusterFixture()
	os.RemoveAll(work)
}

// osArch turns "linux/amd64" into "linux-amd64", as in the archive names.
func osArch(platform string) string { return strings.Replace(platform, "/", "-", 1) }

// binName is a plugin's executable name on a platform: kubectl-safe_patch, kubectl-owners.exe.
func binName(plugin, platform string) string {
	name := "kubectl-" + strings.ReplaceAll(plugin, "-", "_")
	if strings.HasPrefix(platform, "windows/") {
		name += ".exe"
	}
	return name
}

// archivePath is where scripts/package put a plugin's archive for a platform.
func archivePath(plugin, platform string) string {
	return filepath.Join(dist, fmt.Sprintf("%s-%s-%s.tar.gz", plugin, version, osArch(platform)))
}

// needPlatform skips a test of a platform this run did not build.
func needPlatform(t *testing.T, platform string) {
	t.Helper()
	if !built[platform] {
		t.Skipf("%s not built in this run (FIELDWISE_PLATFORMS=%s)", platform, strings.Join(platforms, " "))
	}
}

var (
	unpackMu sync.Mutex
	unpacked = map[string]string{}
)

// unpack extracts a plugin's archive for a platform (once) and returns the directory holding
// its files.
func unpack(t *testing.T, plugin, platform string) string {
	t.Helper()
	unpackMu.Lock()
	defer unpackMu.Unlock()
	if dir, ok := unpacked[plugin+" "+platform]; ok {
		return dir
	}
	dir := filepath.Join(work, "unpacked", plugin+"-"+osArch(platform))
	if err := extract(archivePath(plugin, platform), dir); err != nil {
		t.Fatalf("unpacking the %s %s archive: %v", plugin, platform, err)
	}
	unpacked[plugin+" "+platform] = dir
	return dir
}

// binary is the path of a plugin's executable for a platform, unpacked from its archive.
func binary(t *testing.T, plugin, platform string) string {
	t.Helper()
	return filepath.Join(unpack(t, plugin, platform), binName(plugin, platform))
}

// extract unpacks a .tar.gz's regular files into dir (flat: the archives have no directories).
func extract(archive, dir string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg || strings.Contains(h.Name, "/") {
			return fmt.Errorf("unexpected entry %q (type %c)", h.Name, h.Typeflag)
		}
		out, err := os.OpenFile(filepath.Join(dir, h.Name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, os.FileMode(h.Mode)&0o755|0o600)
		if err != nil {
			return err
		}
		_, err = io.Copy(out, tr)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
}

// archiveListing is the sorted names of an archive's entries.
func archiveListing(archive string) ([]string, error) {
	f, err := os.Open(archive)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	var names []string
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		names = append(names, h.Name)
	}
	slices.Sort(names)
	return names, nil
}

// result is what a command did.
type result struct {
	stdout, stderr string
	code           int
}

// combined is stdout then stderr, trailing newlines dropped (as a shell's $(cmd 2>&1) reads it,
// for outputs that go to only one of them).
func (r result) combined() string { return strings.TrimRight(r.stdout+r.stderr, "\n") }

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout: %s\nstderr: %s", r.code, clip(r.stdout), clip(r.stderr))
}

// run runs argv in dir (the test's cwd when empty) with env added to this process's environment.
// A command that cannot start has exit code -1 and the reason as its stderr.
func run(dir string, env []string, argv ...string) result {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	default:
		r.code, r.stderr = -1, err.Error()
	}
	return r
}

// clip keeps the first 40 lines of a text for a failure message.
func clip(s string) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > 40 {
		return strings.Join(lines[:40], "") + "...\n"
	}
	return s
}

// firstLine is the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// countLines is the number of lines of a file.
func countLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	s := bufio.NewScanner(f)
	for s.Scan() {
		n++
	}
	return n, s.Err()
}

// goTools builds Go commands of a module under tests/ into this run's directory (once per
// module; Go's build cache makes a rebuild a link) and returns that directory.
var goTools = struct {
	sync.Mutex
	dirs map[string]string
	errs map[string]error
}{dirs: map[string]string{}, errs: map[string]error{}}

func buildGoTools(t *testing.T, module string, packages ...string) string {
	t.Helper()
	goTools.Lock()
	defer goTools.Unlock()
	if dir, ok := goTools.dirs[module]; ok {
		return dir
	}
	if err, ok := goTools.errs[module]; ok {
		t.Fatal(err)
	}
	dir := filepath.Join(work, "tools-"+filepath.Base(module))
	r := run(filepath.Join(root, module), nil, append([]string{"go", "build", "-o", dir + "/"}, packages...)...)
	if r.code != 0 {
		goTools.errs[module] = fmt.Errorf("go build %s in %s: %s", strings.Join(packages, " "), module, r)
		t.Fatal(goTools.errs[module])
	}
	goTools.dirs[module] = dir
	return dir
}

// krewTools is the directory holding kubectl-krew and validate-krew-manifest (sigs.k8s.io/krew,
// pinned in tests/krew/go.mod).
func krewTools(t *testing.T) string {
	t.Helper()
	dir := buildGoTools(t, "tests/krew", "sigs.k8s.io/krew/cmd/krew", "sigs.k8s.io/krew/cmd/validate-krew-manifest")
	if _, err := os.Stat(filepath.Join(dir, "kubectl-krew")); err != nil {
		if err := os.Rename(filepath.Join(dir, "krew"), filepath.Join(dir, "kubectl-krew")); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
