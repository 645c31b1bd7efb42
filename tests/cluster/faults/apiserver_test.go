// Package faults tests the harness's fault injection (`scripts/cluster
// apiserver stop|start`) on a private cluster, the way a fault test uses it:
// the kube-apiserver dies with SIGKILL while etcd, the orchestrator and the
// controller-manager stay up, then comes back on the same port with the same
// data.
//
// The cluster version is FIELDWISE_KUBE_VERSION's (default 1.37). The harness
// binary must build or be cached: scripts/test builds it first.
package faults

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// clusterScript is scripts/cluster of this checkout.
func clusterScript(t *testing.T) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate this test's source file")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "scripts", "cluster")
}

// privateCluster is a cluster in its own state directory, stopped at the end.
type privateCluster struct {
	t      *testing.T
	script string
	dir    string
}

func (c *privateCluster) run(args ...string) (string, error) {
	cmd := exec.Command(c.script, args...)
	cmd.Env = append(os.Environ(), "FIELDWISE_CLUSTER_DIR="+c.dir)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (c *privateCluster) must(args ...string) string {
	c.t.Helper()
	out, err := c.run(args...)
	if err != nil {
		c.t.Fatalf("scripts/cluster %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (c *privateCluster) kubectl(args ...string) (string, error) {
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", filepath.Join(c.dir, "kubeconfig"), "--request-timeout=5s"}, args...)...)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func (c *privateCluster) mustKubectl(args ...string) string {
	c.t.Helper()
	out, err := c.kubectl(args...)
	if err != nil {
		c.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// pid reads DIR/name.pid.
func (c *privateCluster) pid(name string) int {
	c.t.Helper()
	b, err := os.ReadFile(filepath.Join(c.dir, name+".pid"))
	if err != nil {
		c.t.Fatalf("reading %s.pid: %v", name, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		c.t.Fatalf("%s.pid holds %q: %v", name, b, err)
	}
	return pid
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// eventually retries check every 500ms for up to timeout.
func eventually(t *testing.T, what string, timeout time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true after %s: %v", what, timeout, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func TestAPIServerStopStartKeepsEtcdAndControllers(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Fatal("kubectl is not on PATH")
	}
	c := &privateCluster{t: t, script: clusterScript(t), dir: filepath.Join(t.TempDir(), "cluster")}
	c.must("up")
	defer func() {
		if out, err := c.run("down"); err != nil {
			t.Errorf("scripts/cluster down: %v\n%s", err, out)
		}
	}()
	server := c.mustKubectl("config", "view", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}")
	c.mustKubectl("create", "namespace", "before-outage")
	c.mustKubectl("-n", "before-outage", "create", "configmap", "kept", "--from-literal=k=v")
	serve, apiserver, kcm := c.pid("serve"), c.pid("apiserver"), c.pid("controller-manager")

	c.must("apiserver", "stop")
	if alive(apiserver) {
		t.Fatalf("kube-apiserver (pid %d) still alive after apiserver stop", apiserver)
	}
	if !alive(serve) {
		t.Fatalf("the orchestrator (pid %d) exited with the apiserver", serve)
	}
	if out, err := c.kubectl("get", "--raw", "/readyz"); err == nil {
		t.Fatalf("/readyz answered while the apiserver is stopped: %s", out)
	}
	if out, err := c.run("status"); err == nil || !strings.Contains(out, "stopped on request") {
		t.Fatalf("status during the outage: err=%v, output %q; want exit 1 and 'stopped on request'", err, out)
	}
	// Long enough for the controller-manager's watches to fail and retry.
	time.Sleep(10 * time.Second)
	if !alive(serve) {
		t.Fatalf("the orchestrator exited during the outage; see %s/serve.log", c.dir)
	}

	c.must("apiserver", "start")
	if got := c.mustKubectl("get", "--raw", "/readyz"); got != "ok" {
		t.Fatalf("/readyz after start = %q", got)
	}
	if again := c.mustKubectl("config", "view", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}"); again != server {
		t.Fatalf("server moved from %s to %s", server, again)
	}
	if restarted := c.pid("apiserver"); restarted == apiserver || !alive(restarted) {
		t.Fatalf("apiserver pid after start = %d (before %d, alive %v): want a new live process", restarted, apiserver, alive(restarted))
	}
	if got := c.mustKubectl("-n", "before-outage", "get", "configmap", "kept", "-o", "jsonpath={.data.k}"); got != "v" {
		t.Fatalf("configmap written before the outage reads %q after it: etcd lost data", got)
	}
	if c.pid("serve") != serve || !alive(serve) {
		t.Fatal("the orchestrator was replaced: etcd did not stay up")
	}
	// The controller-manager (the same process, or a restarted one) does its
	// work again: the ServiceAccount controller fills a new namespace.
	if now := c.pid("controller-manager"); now != kcm {
		t.Logf("controller-manager restarted after the outage (pid %d, was %d)", now, kcm)
	}
	c.mustKubectl("create", "namespace", "after-outage")
	eventually(t, "default ServiceAccount in a namespace created after the outage", 90*time.Second, func() error {
		_, err := c.kubectl("-n", "after-outage", "get", "serviceaccount", "default")
		return err
	})
	if !alive(c.pid("controller-manager")) {
		t.Fatal("controller-manager not running after the outage")
	}

	// A second outage in the same cluster works the same way.
	c.must("apiserver", "stop")
	c.must("apiserver", "start")
	if got := c.mustKubectl("-n", "after-outage", "get", "serviceaccount", "default", "-o", "name"); got != "serviceaccount/default" {
		t.Fatalf("after a second outage: %q", got)
	}
	fmt.Fprintf(os.Stderr, "apiserver stop/start verified on %s\n", server)
}
