package release

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// The objects the cluster checks read: a namespace of this run's own with a Deployment and a
// ConfigMap named krew-demo, made once, deleted at the end.
var clusterFixture struct {
	once      sync.Once
	namespace string
	skip      string // why the cluster checks are skipped
	err       error  // why they fail
}

// needCluster returns the fixture's namespace, or skips the test (no cluster, and
// FIELDWISE_NO_CLUSTER=1 or not CI) or fails it (no cluster under CI=true, or the objects could
// not be made).
func needCluster(t *testing.T) string {
	t.Helper()
	f := &clusterFixture
	f.once.Do(makeClusterFixture)
	switch {
	case f.err != nil:
		t.Fatal(f.err)
	case f.skip != "":
		t.Skip(f.skip)
	}
	return f.namespace
}

func makeClusterFixture() {
	f := &clusterFixture
	kubeconfig := os.Getenv("KUBECONFIG")
	reachable := kubeconfig != "" && run("", nil, "kubectl", "get", "--raw", "/readyz").code == 0
	switch {
	case reachable:
	case os.Getenv("FIELDWISE_NO_CLUSTER") == "1":
		f.skip = "FIELDWISE_NO_CLUSTER=1: not reading from a cluster"
		return
	case os.Getenv("CI") == "true":
		f.err = fmt.Errorf("no cluster reachable (KUBECONFIG=%q): under CI=true the cluster checks must run (FIELDWISE_NO_CLUSTER=1 skips them)", kubeconfig)
		return
	default:
		f.skip = fmt.Sprintf("no cluster reachable (KUBECONFIG=%q)", kubeconfig)
		return
	}
	ns := fmt.Sprintf("fw-release-%d-%d", time.Now().Unix(), os.Getpid())
	for _, argv := range [][]string{
		{"kubectl", "create", "namespace", ns},
		{"kubectl", "-n", ns, "create", "deployment", "krew-demo", "--image=registry.invalid/demo:1"},
		{"kubectl", "-n", ns, "create", "configmap", "krew-demo", "--from-literal=color=blue"},
	} {
		if r := run("", nil, argv...); r.code != 0 {
			f.err = fmt.Errorf("cannot make the test objects (%v): %s", argv, r)
			if argv[2] != "namespace" {
				f.namespace = ns
			}
			return
		}
		f.namespace = ns
	}
}

// deleteClusterFixture deletes the fixture's namespace, not waiting for it to go.
func deleteClusterFixture() {
	if ns := clusterFixture.namespace; ns != "" {
		_ = exec.Command("kubectl", "delete", "namespace", ns, "--wait=false").Run()
	}
}
