// Package flux checks `kubectl owners drift --emit flux` against Flux's own Go API types: the
// snippet is decoded strictly (unknown fields refused) into a HelmRelease's spec, and its
// paths are JSON Pointers (RFC 6901), as helm-controller reads them.
package flux

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/kustomize"
	"sigs.k8s.io/yaml"
)

// emit runs the plugin built by `cargo build --workspace --bins` ($CARGO_TARGET_DIR/debug, else
// the workspace's target/debug) on ../policy.yaml.
func emit(t *testing.T, tool string) []byte {
	t.Helper()
	target := os.Getenv("CARGO_TARGET_DIR")
	if target == "" {
		target = filepath.Join("..", "..", "..", "target")
	}
	binary := filepath.Join(target, "debug", "kubectl-owners")
	if _, err := os.Stat(binary); err != nil {
		t.Fatalf("the plugin is missing at %s: run `cargo build --workspace --bins` first", binary)
	}
	out, err := exec.Command(binary, "drift", "--policy", filepath.Join("..", "policy.yaml"), "--emit", tool).Output()
	if err != nil {
		t.Fatalf("kubectl-owners drift --emit %s: %v", tool, err)
	}
	return out
}

func TestEmittedDriftDetectionIsAHelmReleasesSpec(t *testing.T) {
	var spec helmv2.HelmReleaseSpec
	if err := yaml.UnmarshalStrict(emit(t, "flux"), &spec); err != nil {
		t.Fatalf("not a HelmRelease's spec: %v", err)
	}
	if spec.DriftDetection == nil || spec.DriftDetection.Mode != helmv2.DriftDetectionEnabled {
		t.Fatalf("driftDetection.mode is not enabled: %#v", spec.DriftDetection)
	}
	want := []helmv2.IgnoreRule{{
		// The containers[name="app"] field has no JSON Pointer: left out (and noted).
		Paths: []string{"/spec/replicas", "/metadata/labels/app.kubernetes.io~1version", "/metadata/annotations"},
		Target: &kustomize.Selector{
			Group:         "apps",
			Kind:          "Deployment",
			Namespace:     "prod",
			LabelSelector: "app=web",
		},
	}}
	if !reflect.DeepEqual(spec.DriftDetection.Ignore, want) {
		t.Fatalf("ignore:\n got %#v\nwant %#v", spec.DriftDetection.Ignore, want)
	}
	for _, path := range spec.DriftDetection.Ignore[0].Paths {
		if !strings.HasPrefix(path, "/") {
			t.Errorf("%q is no JSON Pointer", path)
		}
	}
}
