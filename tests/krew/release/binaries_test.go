package release

import (
	"bytes"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"fieldwise.dev/tests/krew/machosig"
)

// The Deployment the --local runs patch, and the runs themselves: the same on every platform,
// from the directory holding deploy.yaml, with a relative file name.
const deployYAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
  labels: {app: web}
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports: [{containerPort: 80}]
      - name: sidecar
        image: busybox:1.36
`

type localRun struct {
	plugin string
	args   []string
}

var localRuns = []localRun{
	{"safe-patch", []string{"--version"}},
	{"owners", []string{"--version"}},
	{"last-applied", []string{"--version"}},
	{"safe-patch", []string{"--local", "-f", "deploy.yaml", "-o", "yaml", "-p", `{"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.28"}]}}}}`}},
	{"safe-patch", []string{"--local", "-f", "deploy.yaml", "-o", "json", "--type", "json", "-p", `[{"op":"replace","path":"/spec/template/spec/containers/1/image","value":"busybox:1.37"}]`}},
	{"safe-patch", []string{"--local", "-f", "deploy.yaml", "-o", "yaml", "--type", "merge", "-p", `{"metadata":{"labels":{"tier":"front"}},"spec":{"replicas":null}}`}},
	{"owners", []string{"--help"}},
	{"last-applied", []string{"--help"}},
}

// runLocal runs every localRuns entry for a platform's binaries, each through runner (qemu,
// wine; none for native).
func runLocal(t *testing.T, platform string, runner ...string) []result {
	t.Helper()
	input := filepath.Join(work, "input")
	if err := os.MkdirAll(input, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(input, "deploy.yaml"), []byte(deployYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"FIELDWISE_DATA_DIR=" + filepath.Join(work, "data"), "NO_COLOR=1"}
	var results []result
	for _, lr := range localRuns {
		argv := append(append(slices.Clone(runner), binary(t, lr.plugin, platform)), lr.args...)
		results = append(results, run(input, env, argv...))
	}
	return results
}

// nativeRuns are the linux/amd64 results, the reference for the other platforms.
var nativeRuns = struct {
	once    sync.Once
	results []result
}{}

func native(t *testing.T) []result {
	t.Helper()
	nativeRuns.once.Do(func() { nativeRuns.results = runLocal(t, "linux/amd64") })
	if len(nativeRuns.results) != len(localRuns) {
		t.Fatal("the native runs failed earlier")
	}
	return nativeRuns.results
}

// sameAsNative says how a platform's results differ from the native ones (stdout and exit code,
// byte for byte), or "" when they do not.
func sameAsNative(t *testing.T, results []result) string {
	t.Helper()
	var diffs strings.Builder
	for i, want := range native(t) {
		got := results[i]
		if got.stdout != want.stdout || got.code != want.code {
			fmt.Fprintf(&diffs, "%s %s:\n  native: exit %d, %q\n  here:   exit %d, %q (stderr %q)\n", localRuns[i].plugin,
				strings.Join(localRuns[i].args, " "), want.code, clip(want.stdout), got.code, clip(got.stdout), clip(got.stderr))
		}
	}
	return diffs.String()
}

// TestLinuxAmd64IsStatic: the linux/amd64 binaries have no ELF interpreter and no NEEDED
// libraries, so they run on any Linux x86-64.
func TestLinuxAmd64IsStatic(t *testing.T) {
	for _, plugin := range plugins {
		t.Run(plugin, func(t *testing.T) {
			f, err := elf.Open(binary(t, plugin, "linux/amd64"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_X86_64 {
				t.Errorf("ELF %v %v, want 64-bit x86-64", f.Class, f.Machine)
			}
			for _, p := range f.Progs {
				if p.Type == elf.PT_INTERP {
					t.Error("has an ELF interpreter (PT_INTERP): dynamically linked")
				}
			}
			if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
				t.Errorf("NEEDED libraries %v (%v)", libs, err)
			}
			t.Logf("ELF 64-bit x86-64 %v, no interpreter, no NEEDED", f.Type)
		})
	}
}

// TestShippedBinariesHaveNoTestHooks: the release binaries are built without fieldwise-kube's
// test-hooks feature (the end-to-end tests' shell hooks between a preview and its write), so no
// environment variable can make a shipped plugin run a command: none names one.
func TestShippedBinariesHaveNoTestHooks(t *testing.T) {
	for _, plugin := range plugins {
		t.Run(plugin, func(t *testing.T) {
			data, err := os.ReadFile(binary(t, plugin, "linux/amd64"))
			if err != nil {
				t.Fatal(err)
			}
			for _, hook := range []string{"FIELDWISE_HOOK_BEFORE_WRITE", "FIELDWISE_HOOK_BEFORE_DRY_RUN"} {
				if bytes.Contains(data, []byte(hook)) {
					t.Errorf("%s names %s: built with the test-hooks feature", plugin, hook)
				}
			}
		})
	}
}

// TestLinuxAmd64LocalRuns: --version and three --local patches (strategic merge, JSON Patch,
// merge) of the native binaries give the expected results.
func TestLinuxAmd64LocalRuns(t *testing.T) {
	results := native(t)
	checks := []struct {
		run  int
		want *regexp.Regexp
	}{
		{0, regexp.MustCompile(`^kubectl safe-patch ` + regexp.QuoteMeta(strings.TrimPrefix(version, "v")) + ` `)},
		{1, regexp.MustCompile(`^kubectl owners ` + regexp.QuoteMeta(strings.TrimPrefix(version, "v")) + ` `)},
		{2, regexp.MustCompile(`^kubectl last-applied ` + regexp.QuoteMeta(strings.TrimPrefix(version, "v")) + ` `)},
		{3, regexp.MustCompile(`(?m)^\s+image: nginx:1.28$`)},
		{4, regexp.MustCompile(`"image": "busybox:1.37"`)},
		{5, regexp.MustCompile(`(?m)^\s+tier: front$`)},
		{6, regexp.MustCompile(`(?m)^Usage: kubectl owners`)},
		{7, regexp.MustCompile(`(?m)^Usage: kubectl last-applied`)},
	}
	for _, c := range checks {
		r := results[c.run]
		if r.code != 0 || !c.want.MatchString(r.stdout) {
			t.Errorf("%s %s: want exit 0 and %v; %s", localRuns[c.run].plugin, strings.Join(localRuns[c.run].args, " "), c.want, r)
		}
	}
	if strings.Contains(results[5].stdout, "replicas:") {
		t.Errorf("the merge patch's replicas: null left replicas in:\n%s", results[5].stdout)
	}
	t.Log(firstLine(results[0].stdout))
}

// TestLinuxArm64Format: ELF 64-bit aarch64; logs the newest glibc symbol version it needs, the
// oldest glibc it runs on.
func TestLinuxArm64Format(t *testing.T) {
	needPlatform(t, "linux/arm64")
	for _, plugin := range plugins {
		t.Run(plugin, func(t *testing.T) {
			f, err := elf.Open(binary(t, plugin, "linux/arm64"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Class != elf.ELFCLASS64 || f.Data != elf.ELFDATA2LSB || f.Machine != elf.EM_AARCH64 {
				t.Fatalf("ELF %v %v %v, want 64-bit LSB aarch64", f.Class, f.Data, f.Machine)
			}
			symbols, err := f.ImportedSymbols()
			if err != nil {
				t.Fatal(err)
			}
			newest := ""
			for _, s := range symbols {
				if strings.HasPrefix(s.Version, "GLIBC_") && versionLess(newest, s.Version) {
					newest = s.Version
				}
			}
			if newest == "" {
				t.Fatal("no GLIBC_ symbol versions: not the glibc build")
			}
			t.Logf("ELF 64-bit LSB aarch64, needs %s or later", newest)
		})
	}
}

// versionLess compares GLIBC_2.17-style versions numerically ("" is the least).
func versionLess(a, b string) bool {
	parse := func(v string) []int {
		var n []int
		for _, p := range strings.Split(strings.TrimPrefix(v, "GLIBC_"), ".") {
			i, _ := strconv.Atoi(p)
			n = append(n, i)
		}
		return n
	}
	if a == "" {
		return true
	}
	return slices.Compare(parse(a), parse(b)) < 0
}

// TestLinuxArm64UnderQemu: the linux/arm64 binaries under qemu-user give the native binaries'
// outputs and exit codes byte for byte.
func TestLinuxArm64UnderQemu(t *testing.T) {
	needPlatform(t, "linux/arm64")
	results := runLocal(t, "linux/arm64", "env", "QEMU_LD_PREFIX=/usr/aarch64-linux-gnu", "qemu-aarch64-static")
	if diffs := sameAsNative(t, results); diffs != "" {
		t.Fatalf("linux/arm64 under qemu-user differs from native:\n%s", diffs)
	}
	t.Logf("%d runs (--version, --help, --local patches) byte for byte as native", len(localRuns))
}

// TestDarwinBinaries: Mach-O 64-bit executables of the right architecture, for macOS 11.0 and
// later (LC_BUILD_VERSION minos), linking only macOS system libraries; darwin/arm64 with a valid
// (ad-hoc) code signature, every page hash recomputed (Apple silicon kills an arm64 binary
// without one); darwin/amd64 unsigned or validly signed. Not run: no macOS here.
func TestDarwinBinaries(t *testing.T) {
	if !built["darwin/amd64"] && !built["darwin/arm64"] {
		needPlatform(t, "darwin/arm64")
	}
	for _, arch := range []string{"amd64", "arm64"} {
		for _, plugin := range plugins {
			platform := "darwin/" + arch
			t.Run(arch+"/"+plugin, func(t *testing.T) {
				needPlatform(t, platform)
				path := binary(t, plugin, platform)
				f, err := macho.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				wantCPU := map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[arch]
				if f.Magic != macho.Magic64 || f.Type != macho.TypeExec || f.Cpu != wantCPU {
					t.Errorf("Mach-O magic %#x type %v cpu %v, want a 64-bit %v executable", f.Magic, f.Type, f.Cpu, wantCPU)
				}
				minos, err := machoMinOS(f)
				if err != nil || minos != "11.0" {
					t.Errorf("minimum macOS (LC_BUILD_VERSION minos) %q (%v), want 11.0", minos, err)
				}
				libs, err := f.ImportedLibraries()
				if err != nil || len(libs) == 0 {
					t.Errorf("linked libraries %v (%v): want some, all macOS system ones", libs, err)
				}
				var short []string
				for _, lib := range libs {
					if !strings.HasPrefix(lib, "/usr/lib/") && !strings.HasPrefix(lib, "/System/Library/Frameworks/") {
						t.Errorf("links %s, not a macOS system library", lib)
					}
					short = append(short, filepath.Base(lib))
				}
				signature, err := machosig.Verify(path)
				if arch == "amd64" && errors.Is(err, machosig.ErrUnsigned) {
					signature, err = "not signed (Intel Macs run it)", nil
				}
				if err != nil {
					t.Errorf("code signature: %v", err)
				}
				t.Logf("Mach-O 64-bit %v executable, macOS %s or later, links %s; %s", f.Cpu, minos, strings.Join(short, " "), signature)
			})
		}
	}
}

// machoMinOS reads the minimum macOS of LC_BUILD_VERSION (or LC_VERSION_MIN_MACOSX), "11.0".
func machoMinOS(f *macho.File) (string, error) {
	const lcVersionMinMacOSX, lcBuildVersion = 0x24, 0x32
	for _, l := range f.Loads {
		raw := l.Raw()
		if len(raw) < 16 {
			continue
		}
		var v uint32
		switch f.ByteOrder.Uint32(raw) {
		case lcBuildVersion:
			v = f.ByteOrder.Uint32(raw[12:]) // cmd, cmdsize, platform, minos
		case lcVersionMinMacOSX:
			v = f.ByteOrder.Uint32(raw[8:]) // cmd, cmdsize, version
		default:
			continue
		}
		s := fmt.Sprintf("%d.%d", v>>16, (v>>8)&0xff)
		if patch := v & 0xff; patch != 0 {
			s += fmt.Sprintf(".%d", patch)
		}
		return s, nil
	}
	return "", errors.New("no LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX")
}

// TestMachosigRejectsTamperedBinary: the signature check itself rejects a darwin/arm64 binary
// with one byte of its first page changed after signing.
func TestMachosigRejectsTamperedBinary(t *testing.T) {
	needPlatform(t, "darwin/arm64")
	data, err := os.ReadFile(binary(t, "owners", "darwin/arm64"))
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 4096 {
		t.Fatalf("binary of %d bytes", len(data))
	}
	tampered := bytes.Clone(data)
	tampered[4000] ^= 0xff
	path := filepath.Join(work, "kubectl-owners.tampered")
	if err := os.WriteFile(path, tampered, 0o644); err != nil {
		t.Fatal(err)
	}
	summary, err := machosig.Verify(path)
	if err == nil {
		t.Fatalf("machosig accepts a binary changed after signing: %s", summary)
	}
	if errors.Is(err, machosig.ErrUnsigned) {
		t.Fatalf("machosig calls the tampered binary unsigned: %v", err)
	}
	t.Logf("rejected: %v", err)
}

// TestWindowsBinaries: PE32+ console x86-64 executables importing only Windows' own DLLs (a
// MinGW runtime DLL would be missing on a user's Windows).
func TestWindowsBinaries(t *testing.T) {
	needPlatform(t, "windows/amd64")
	for _, plugin := range plugins {
		t.Run(plugin, func(t *testing.T) {
			f, err := pe.Open(binary(t, plugin, "windows/amd64"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			header, ok := f.OptionalHeader.(*pe.OptionalHeader64)
			if !ok || f.Machine != pe.IMAGE_FILE_MACHINE_AMD64 || header.Subsystem != pe.IMAGE_SUBSYSTEM_WINDOWS_CUI ||
				f.Characteristics&pe.IMAGE_FILE_EXECUTABLE_IMAGE == 0 {
				t.Errorf("not a PE32+ x86-64 console executable (machine %#x, PE32+ %v, characteristics %#x)", f.Machine, ok, f.Characteristics)
			}
			dlls, err := importedDLLs(f)
			if err != nil || len(dlls) == 0 {
				t.Fatalf("imported DLLs %v (%v)", dlls, err)
			}
			for _, dll := range dlls {
				if regexp.MustCompile(`(?i)libgcc|libwinpthread|libstdc`).MatchString(dll) {
					t.Errorf("imports %s, MinGW's runtime", dll)
				}
			}
			t.Logf("PE32+ console x86-64, imports %s", strings.Join(dlls, " "))
		})
	}
}

// importedDLLs are the DLLs a PE file imports from, lower-cased and sorted (debug/pe gives the
// imported symbols as "symbol:DLL"; its ImportedLibraries is not implemented).
func importedDLLs(f *pe.File) ([]string, error) {
	symbols, err := f.ImportedSymbols()
	if err != nil {
		return nil, err
	}
	var dlls []string
	for _, s := range symbols {
		if _, dll, ok := strings.Cut(s, ":"); ok && !slices.Contains(dlls, strings.ToLower(dll)) {
			dlls = append(dlls, strings.ToLower(dll))
		}
	}
	slices.Sort(dlls)
	return dlls, nil
}
