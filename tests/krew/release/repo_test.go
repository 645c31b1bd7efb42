package release

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkflowsPassActionlint: every GitHub workflow passes actionlint (pinned in
// tests/actionlint/go.mod), shellcheck of their run steps aside.
func TestWorkflowsPassActionlint(t *testing.T) {
	tools := buildGoTools(t, "tests/actionlint", "github.com/rhysd/actionlint/cmd/actionlint")
	workflows, err := filepath.Glob(filepath.Join(root, ".github/workflows/*.yml"))
	if err != nil || len(workflows) == 0 {
		t.Fatalf("no workflows in .github/workflows (%v)", err)
	}
	r := run(root, nil, append([]string{filepath.Join(tools, "actionlint"), "-no-color"}, workflows...)...)
	if r.code != 0 {
		t.Fatalf("actionlint: %s", r)
	}
	t.Logf("%d workflows clean", len(workflows))
}

// TestCratesPackageForCratesIo: the crates are ready for crates.io (metadata complete, packages
// build their file lists), in dependency order with unpublished path dependencies from a local
// overlay. --no-verify skips a second full build of every crate (the release builds compile the
// same sources); --allow-dirty lets it run on a developer's uncommitted work (CI's clone is clean).
func TestCratesPackageForCratesIo(t *testing.T) {
	r := run(root, nil, "cargo", "publish", "--dry-run", "--workspace", "--no-verify", "--allow-dirty", "--locked")
	if r.code != 0 {
		t.Fatalf("cargo publish --dry-run: %s", r)
	}
	for _, crate := range []string{"fieldwise-core", "fieldwise-kube", "kubectl-safe_patch", "kubectl-owners", "kubectl-last_applied"} {
		if !strings.Contains(r.stderr, "Packaging "+crate+" ") {
			t.Errorf("cargo publish --dry-run did not package %s:\n%s", crate, clip(r.stderr))
		}
	}
}
