package release

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"fieldwise.dev/tests/krew/botrender"
)

// manifestPath is the manifest scripts/package rendered for a plugin (release uris).
func manifestPath(plugin string) string { return filepath.Join(dist, "krew-manifests", plugin+".yaml") }

// selectors counts a manifest's platform entries.
func selectors(manifest []byte) int {
	return len(regexp.MustCompile(`(?m)^  - selector:`).FindAll(manifest, -1))
}

// renderManifest runs packaging/render-krew-manifest.py (what scripts/package runs) for a plugin.
func renderManifest(t *testing.T, plugin, url, assets string) []byte {
	t.Helper()
	r := run(root, nil, "python3", "packaging/render-krew-manifest.py", "krew-manifests/"+plugin+".yaml", version, url, assets)
	if r.code != 0 {
		t.Fatalf("render-krew-manifest.py: %s", r)
	}
	return []byte(r.stdout)
}

// assets is a directory with an archive for every plugin and all five platforms: dist when all
// were built, else a copy of dist's with stand-ins for the rest (their sha256 is the stand-in's),
// so the full manifests render.
var standins struct {
	once sync.Once
	dir  string
	err  error
}

func assets(t *testing.T) string {
	t.Helper()
	if len(platforms) == len(allPlatforms) {
		return dist
	}
	standins.once.Do(func() {
		dir := filepath.Join(work, "standin")
		if standins.err = os.MkdirAll(dir, 0o755); standins.err != nil {
			return
		}
		for _, platform := range allPlatforms {
			for _, plugin := range plugins {
				name := filepath.Base(archivePath(plugin, platform))
				data, err := os.ReadFile(archivePath(plugin, platform))
				if !built[platform] {
					data, err = []byte("stand-in for "+name+"\n"), nil
				}
				if err == nil {
					err = os.WriteFile(filepath.Join(dir, name), data, 0o644)
				}
				if err != nil {
					standins.err = err
					return
				}
			}
		}
		standins.dir = dir
	})
	if standins.err != nil {
		t.Fatal(standins.err)
	}
	return standins.dir
}

// TestKrewManifestValidates: validate-krew-manifest accepts each manifest as released (release
// uris, -skip-install) with all five platforms' entries; its shortDescription is under 50
// characters (krew-index asks for that); dist's manifest lists the platforms built.
func TestKrewManifestValidates(t *testing.T) {
	tools := krewTools(t)
	for _, plugin := range plugins {
		t.Run(plugin, func(t *testing.T) {
			manifest, err := os.ReadFile(manifestPath(plugin))
			if err != nil {
				t.Fatal(err)
			}
			full := manifestPath(plugin)
			if len(platforms) < len(allPlatforms) {
				// krew wants the file named after the plugin.
				full = filepath.Join(work, "full", plugin+".yaml")
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(full, renderManifest(t, plugin, releaseURL, assets(t)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			fullManifest, err := os.ReadFile(full)
			if err != nil {
				t.Fatal(err)
			}
			short := ""
			if m := regexp.MustCompile(`(?m)^  shortDescription: (.*)$`).FindSubmatch(manifest); m != nil {
				short = string(m[1])
			}
			r := run("", nil, filepath.Join(tools, "validate-krew-manifest"), "-manifest", full, "-skip-install")
			if r.code != 0 || short == "" || len(short) >= 50 || selectors(fullManifest) != 5 || selectors(manifest) != len(platforms) {
				t.Fatalf("%d platforms in the full manifest (want 5), %d in dist's (want %d), shortDescription %d chars (want 1-49); validate-krew-manifest: %s",
					selectors(fullManifest), selectors(manifest), len(platforms), len(short), r)
			}
			t.Logf("valid, 5 platforms, shortDescription %d chars", len(short))
		})
	}
}

// TestKrewBotRendersSameManifest: what krew-release-bot will send to krew-index, the template
// through Go's text/template with the bot's functions, equals our renderer's output (less its
// "Rendered by" line), with no comment and no template action left.
func TestKrewBotRendersSameManifest(t *testing.T) {
	for _, plugin := range plugins {
		t.Run(plugin, func(t *testing.T) {
			dir := assets(t)
			ours := renderManifest(t, plugin, "https://github.com/fieldwise/fieldwise/releases/download/"+version, dir)
			_, ours, _ = bytes.Cut(ours, []byte("\n")) // the "Rendered by" line
			bot, err := botrender.Render(filepath.Join(root, "krew-manifests", plugin+".yaml"), version, dir)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(ours, bot) {
				t.Fatalf("Go's text/template rendering differs from packaging/render-krew-manifest.py:\nbot:\n%s\nours:\n%s", clip(string(bot)), clip(string(ours)))
			}
			if regexp.MustCompile(`(?m)\{\{|^#`).Match(bot) {
				t.Fatalf("a comment or template action is left:\n%s", clip(string(bot)))
			}
			t.Logf("%d lines, no comment, no action left", bytes.Count(bot, []byte("\n")))
		})
	}
}

// TestKrewManifestInstallsFromLoopback: the manifest with its uris pointing at a loopback server
// holding dist installs every platform built (validate-krew-manifest unpacks each archive and
// finds each file the manifest names).
func TestKrewManifestInstallsFromLoopback(t *testing.T) {
	tools := krewTools(t)
	server := httptest.NewServer(http.FileServer(http.Dir(dist)))
	defer server.Close()
	for _, plugin := range plugins {
		t.Run(plugin, func(t *testing.T) {
			manifest, err := os.ReadFile(manifestPath(plugin))
			if err != nil {
				t.Fatal(err)
			}
			local := filepath.Join(work, "loopback", plugin+".yaml")
			if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(local, bytes.ReplaceAll(manifest, []byte(releaseURL+"/"), []byte(server.URL+"/")), 0o644); err != nil {
				t.Fatal(err)
			}
			// It installs each platform with `kubectl krew install`: krew on PATH.
			r := run("", []string{"PATH=" + tools + ":" + os.Getenv("PATH"), "KREW_NO_UPGRADE_CHECK=1"}, filepath.Join(tools, "validate-krew-manifest"), "-manifest", local)
			want := fmt.Sprintf("all %d spec.platforms installed fine", len(platforms))
			if r.code != 0 || !strings.Contains(r.combined(), want) {
				t.Fatalf("want %q: %s", want, r)
			}
			t.Log(want)
		})
	}
}

// TestKrewLifecycle: as a user would, with the real krew and kubectl and nothing else on PATH:
// each plugin installed from its release manifest and the linux/amd64 archive, kubectl finding it
// by the name a user types (--version, --help), completion install (twice, as the manifest's
// caveats say) and kubectl's own completion entry point (flags; names from the cluster for
// safe-patch); kubectl plugin list with every plugin and no warning; completion uninstall
// (twice); krew uninstall removing the link and the files.
func TestKrewLifecycle(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skipf("krew installs the linux/amd64 archive; this machine is %s", runtime.GOARCH)
	}
	tools := krewTools(t)
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatal(err)
	}
	krewRoot := filepath.Join(work, "krew-root")
	// krew's uninstall (like list and search) refuses to run without a local plugin index, a git
	// clone that `kubectl krew update` makes from the network; an empty local one stands in for
	// it, offline.
	if err := os.MkdirAll(filepath.Join(krewRoot, "index/default/plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := run("", nil, "git", "init", "-q", filepath.Join(krewRoot, "index/default")); r.code != 0 {
		t.Fatalf("git init of the stand-in index: %s", r)
	}
	// Only our tools, kubectl and the system: no stray plugins from the user's PATH.
	env := []string{"KREW_ROOT=" + krewRoot, "KREW_NO_UPGRADE_CHECK=1",
		"PATH=" + strings.Join([]string{filepath.Join(krewRoot, "bin"), tools, filepath.Dir(kubectl), "/usr/local/bin", "/usr/bin", "/bin"}, ":")}
	kubectlRun := func(args ...string) result { return run("", env, append([]string{kubectl}, args...)...) }
	bin := func(name string) string { return filepath.Join(krewRoot, "bin", name) }
	release := strings.TrimPrefix(version, "v")

	installed := map[string]bool{}
	for _, plugin := range plugins {
		exe := binName(plugin, "linux/amd64")
		completer := strings.Replace(exe, "kubectl-", "kubectl_complete-", 1)
		t.Run("install/"+plugin, func(t *testing.T) {
			r := kubectlRun("krew", "install", "--manifest="+manifestPath(plugin), "--archive="+archivePath(plugin, "linux/amd64"))
			if info, err := os.Lstat(bin(exe)); r.code != 0 || err != nil || info.Mode()&os.ModeSymlink == 0 {
				t.Fatalf("kubectl krew install --manifest --archive: %s (link: %v)", r, err)
			}
			if _, err := os.Stat(bin(exe)); err != nil {
				t.Fatalf("%s links to nothing: %v", exe, err)
			}
			installed[plugin] = true
			t.Logf("%s linked", exe)
		})
		// needInstalled skips the steps of a plugin whose install failed (that failure is reported).
		needInstalled := func(t *testing.T) {
			if !installed[plugin] {
				t.Skipf("%s did not install", plugin)
			}
		}
		t.Run("version/"+plugin, func(t *testing.T) {
			needInstalled(t)
			r := kubectlRun(plugin, "--version")
			want := regexp.MustCompile(`^kubectl ` + regexp.QuoteMeta(plugin) + ` ` + regexp.QuoteMeta(release) + ` \(commit [^)]+\)$`)
			if r.code != 0 || !want.MatchString(r.combined()) {
				t.Fatalf("kubectl %s --version: want %v; %s", plugin, want, r)
			}
			t.Log(r.combined())
		})
		t.Run("help/"+plugin, func(t *testing.T) {
			needInstalled(t)
			r := kubectlRun(plugin, "--help")
			usage := regexp.MustCompile(`(?m)^Usage: kubectl ` + regexp.QuoteMeta(plugin) + `.*$`).FindString(r.combined())
			if r.code != 0 || usage == "" {
				t.Fatalf("kubectl %s --help: %s", plugin, r)
			}
			t.Log(usage)
		})
		t.Run("completion-install/"+plugin, func(t *testing.T) {
			needInstalled(t)
			first := kubectlRun(plugin, "completion", "install").combined()
			second := kubectlRun(plugin, "completion", "install").combined()
			link, _ := os.Readlink(bin(completer))
			if first != "completion installed: "+bin(completer) || second != "completion already installed: "+bin(completer) || link != exe {
				t.Fatalf("install: %q\ninstall again: %q\n%s -> %q, want %s", first, second, completer, link, exe)
			}
			t.Logf("%s -> %s", bin(completer), exe)
		})
		t.Run("complete-flags/"+plugin, func(t *testing.T) {
			needInstalled(t)
			r := kubectlRun("__complete", plugin, "--ver")
			if r.code != 0 || !regexp.MustCompile(`(?m)^--version`).MatchString(r.stdout) {
				t.Fatalf("kubectl __complete %s --ver: %s", plugin, r)
			}
		})
		if plugin == "safe-patch" {
			t.Run("complete-names/safe-patch", func(t *testing.T) {
				needInstalled(t)
				namespace := needCluster(t)
				r := kubectlRun("__complete", "safe-patch", "-n", namespace, "deploy/")
				lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
				if r.code != 0 || !regexp.MustCompile(`(?m)^deploy/krew-demo$`).MatchString(r.stdout) || !strings.HasPrefix(lines[len(lines)-1], ":") {
					t.Fatalf("kubectl __complete safe-patch -n %s deploy/: want deploy/krew-demo from the cluster and a :directive line; %s", namespace, r)
				}
				t.Logf("deploy/krew-demo from the cluster (%s)", namespace)
			})
		}
	}

	t.Run("plugin-list", func(t *testing.T) {
		r := kubectlRun("plugin", "list")
		out := r.combined()
		if r.code != 0 || regexp.MustCompile(`(?i)warning`).MatchString(out) {
			t.Fatalf("kubectl plugin list: %s", r)
		}
		for _, plugin := range plugins {
			if !regexp.MustCompile(`(?m)/` + regexp.QuoteMeta(binName(plugin, "linux/amd64")) + `$`).MatchString(out) {
				t.Errorf("kubectl plugin list does not list %s:\n%s", plugin, out)
			}
		}
	})

	for _, plugin := range plugins {
		exe := binName(plugin, "linux/amd64")
		completer := strings.Replace(exe, "kubectl-", "kubectl_complete-", 1)
		t.Run("completion-uninstall/"+plugin, func(t *testing.T) {
			if !installed[plugin] {
				t.Skipf("%s did not install", plugin)
			}
			first := kubectlRun(plugin, "completion", "uninstall").combined()
			second := kubectlRun(plugin, "completion", "uninstall").combined()
			_, completerErr := os.Lstat(bin(completer))
			info, binErr := os.Lstat(bin(exe))
			if first != "completion uninstalled: removed "+bin(completer) || second != "completion not installed: no "+bin(completer) ||
				completerErr == nil || binErr != nil || info.Mode()&os.ModeSymlink == 0 {
				t.Fatalf("uninstall: %q\nuninstall again: %q\ncompleter still there: %v; plugin link: %v", first, second, completerErr == nil, binErr)
			}
		})
		t.Run("uninstall/"+plugin, func(t *testing.T) {
			if !installed[plugin] {
				t.Skipf("%s did not install", plugin)
			}
			r := kubectlRun("krew", "uninstall", plugin)
			_, linkErr := os.Lstat(bin(exe))
			_, storeErr := os.Stat(filepath.Join(krewRoot, "store", plugin))
			after := kubectlRun(plugin, "--help")
			if r.code != 0 || linkErr == nil || storeErr == nil || after.code == 0 {
				t.Fatalf("kubectl krew uninstall: %s\nlink still there: %v, store still there: %v, kubectl %s --help still runs: %v",
					r, linkErr == nil, storeErr == nil, plugin, after.code == 0)
			}
		})
	}
}
