// Package argocd checks `kubectl owners drift --emit argocd` against Argo CD's own Go API
// types: the snippet is decoded strictly (unknown fields refused) into an Application's spec,
// and its jq path expressions are compiled by gojq, the jq Argo CD runs them with.
package argocd

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	argo "github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/itchyny/gojq"
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

func TestEmittedIgnoreDifferencesAreAnApplicationSpecs(t *testing.T) {
	var spec argo.ApplicationSpec
	if err := yaml.UnmarshalStrict(emit(t, "argocd"), &spec); err != nil {
		t.Fatalf("not an Application's spec: %v", err)
	}
	want := argo.IgnoreDifferences{
		{
			Group:     "apps",
			Kind:      "Deployment",
			Namespace: "prod",
			JQPathExpressions: []string{
				".spec.replicas",
				`.metadata.labels["app.kubernetes.io/version"]`,
				`.spec.template.spec.containers[] | select(.name == "app") | .image`,
			},
			ManagedFieldsManagers: []string{"keda-operator"},
		},
		{Group: "apps", Kind: "Deployment", Namespace: "prod", JQPathExpressions: []string{".metadata.annotations"}},
	}
	if !reflect.DeepEqual(spec.IgnoreDifferences, want) {
		t.Fatalf("ignoreDifferences:\n got %#v\nwant %#v", spec.IgnoreDifferences, want)
	}
	for _, entry := range spec.IgnoreDifferences {
		for _, expression := range entry.JQPathExpressions {
			if _, err := gojq.Parse(expression); err != nil {
				t.Errorf("jq cannot read %q: %v", expression, err)
			}
		}
	}
}
