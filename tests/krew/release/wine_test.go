package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// bcryptprimitivesC is a stand-in for Windows' bcryptprimitives.dll: Rust's standard library gets
// random bytes from its ProcessPrng (Windows 10 and later), and Debian 12's wine 8.0 has no such
// DLL, so every .exe would exit 53 (DLL not found). ProcessPrng over advapi32's RtlGenRandom, as
// a newer wine ships it.
const bcryptprimitivesC = `#include <windows.h>
BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length); /* advapi32's RtlGenRandom */
BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
  while (length > 0) {
    ULONG n = length > 0x10000000 ? 0x10000000 : (ULONG)length;
    if (!SystemFunction036(data, n)) return FALSE;
    data += n;
    length -= n;
  }
  return TRUE;
}
`

// wineSetup is the wine loader and the environment its runs need, made once: a wine prefix
// cached in ${XDG_CACHE_HOME:-~/.cache}/fieldwise/wine-prefix with the bcryptprimitives.dll
// stand-in in its system32.
var wineSetup struct {
	once   sync.Once
	loader string
	env    []string
	err    string
}

func wine(t *testing.T) (loader string, env []string) {
	t.Helper()
	needPlatform(t, "windows/amd64")
	w := &wineSetup
	w.once.Do(func() {
		w.loader = os.Getenv("FIELDWISE_WINE")
		if w.loader == "" {
			if path, err := exec.LookPath("wine64"); err == nil {
				w.loader = path
			} else {
				w.loader = "/usr/lib/wine/wine64" // where Debian and Ubuntu install it
			}
		}
		prefix := filepath.Join(cacheDir, "wine-prefix")
		w.env = []string{"WINEPREFIX=" + prefix, "WINEDEBUG=-all", "WINEDLLOVERRIDES=mscoree,mshtml=d"}
		if _, err := os.Stat(filepath.Join(prefix, "system.reg")); err != nil {
			t.Log("creating the wine prefix (cached after the first run)")
			if r := run("", w.env, w.loader, "wineboot", "-i"); r.code != 0 {
				w.err = "wineboot -i: " + r.String()
				return
			}
		}
		dll := filepath.Join(prefix, "drive_c/windows/system32/bcryptprimitives.dll")
		_, inPrefix := os.Stat(dll)
		_, inWine := os.Stat("/usr/lib/x86_64-linux-gnu/wine/x86_64-windows/bcryptprimitives.dll")
		if inPrefix != nil && inWine != nil {
			dir := filepath.Join(work, "prng")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				w.err = err.Error()
				return
			}
			_ = os.WriteFile(filepath.Join(dir, "prng.c"), []byte(bcryptprimitivesC), 0o644)
			_ = os.WriteFile(filepath.Join(dir, "prng.def"), []byte("LIBRARY bcryptprimitives\nEXPORTS\nProcessPrng\n"), 0o644)
			r := run(dir, nil, "x86_64-w64-mingw32-gcc", "-shared", "-O2", "-o", dll, "prng.c", "prng.def", "-ladvapi32")
			if r.code != 0 {
				w.err = "building the bcryptprimitives.dll stand-in: " + r.String()
				return
			}
			t.Log("wine: added a bcryptprimitives.dll stand-in (ProcessPrng) to the prefix")
		}
	})
	if w.err != "" {
		t.Fatal(w.err)
	}
	return w.loader, w.env
}

// TestWindowsUnderWine: the windows/amd64 binaries under wine give the native binaries' outputs
// and exit codes byte for byte.
func TestWindowsUnderWine(t *testing.T) {
	loader, env := wine(t)
	results := runLocal(t, "windows/amd64", append(append([]string{"env"}, env...), loader)...)
	if diffs := sameAsNative(t, results); diffs != "" {
		t.Fatalf("windows/amd64 under wine differs from native:\n%s", diffs)
	}
	t.Logf("%d runs (--version, --help, --local patches) byte for byte as native", len(localRuns))
}

// TestWindowsReadsClusterUnderWine: kubectl-owners.exe under wine reads a ConfigMap from the
// local cluster over loopback, the same output as the native binary's.
func TestWindowsReadsClusterUnderWine(t *testing.T) {
	loader, env := wine(t)
	namespace := needCluster(t)
	kubeconfig := os.Getenv("KUBECONFIG")
	native := run("", nil, binary(t, "owners", "linux/amd64"), "--kubeconfig", kubeconfig, "-n", namespace, "configmap/krew-demo", "-o", "json")
	winKubeconfig := "Z:" + strings.ReplaceAll(kubeconfig, "/", `\`)
	win := run("", env, loader, binary(t, "owners", "windows/amd64"), "--kubeconfig", winKubeconfig, "-n", namespace, "configmap/krew-demo", "-o", "json")
	if win.code != 0 || native.code != 0 || win.combined() != native.combined() || !strings.Contains(win.stdout, `"krew-demo"`) {
		t.Fatalf("wine: %s\nnative: %s", win, native)
	}
	t.Logf("configmap/krew-demo read over loopback, %d bytes, same as native", len(win.stdout))
}

// TestWindowsCompletionInstallUnderWine: completion install on Windows makes a copy named
// kubectl_complete-owners.exe (twice: the second says it is there), the completer answers, and
// completion uninstall removes it.
func TestWindowsCompletionInstallUnderWine(t *testing.T) {
	loader, env := wine(t)
	dir := filepath.Join(work, "windows-install")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "kubectl-owners.exe")
	data, err := os.ReadFile(binary(t, "owners", "windows/amd64"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	first := run("", env, loader, exe, "completion", "install").combined()
	second := run("", env, loader, exe, "completion", "install").combined()
	answer := strings.ReplaceAll(run("", env, loader, filepath.Join(dir, "kubectl_complete-owners.exe"), "--ver").combined(), "\r", "")
	removed := run("", env, loader, exe, "completion", "uninstall").combined()
	_, gone := os.Stat(filepath.Join(dir, "kubectl_complete-owners.exe"))
	if !strings.HasPrefix(first, "completion installed: ") || !strings.Contains(first, "kubectl_complete-owners.exe") ||
		!strings.HasPrefix(second, "completion already installed: ") || !strings.Contains(answer, "--version") ||
		!strings.HasPrefix(removed, "completion uninstalled: ") || gone == nil {
		t.Fatalf("install: %q\ninstall again: %q\ncompleter --ver: %q\nuninstall: %q\ncompleter gone: %v", first, second, answer, removed, gone != nil)
	}
	t.Log(first)
}
