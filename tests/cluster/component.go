package main

// A component is one control-plane process (kube-apiserver or
// kube-controller-manager) that serve started by re-executing this binary.
// It knows when it has exited, so the orchestrator can tell a crash from a
// stop it asked for, and poll can stop waiting on a dead process.

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// component is a running (or exited) control-plane process.
type component struct {
	name string
	cmd  *exec.Cmd
	// done is closed once the process has exited and been reaped.
	done chan struct{}
}

// upstreamName is the binary name each component runs under (see main.go).
var upstreamName = map[string]string{"apiserver": "kube-apiserver", "controller-manager": "kube-controller-manager"}

// startComponent starts name with flags, appending its output to DIR/name.log
// (a restarted component keeps its earlier log) and its pid to DIR/name.pid.
// Its exit is announced on died.
func startComponent(l clusterLayout, died chan<- *component, name string, flags []string) (*component, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(l.path(name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, flags...)
	cmd.Args[0] = upstreamName[name]
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// A component must never outlive the orchestrator that owns its etcd.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	if err := os.WriteFile(l.path(name+".pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o600); err != nil {
		_ = cmd.Process.Kill()
		return nil, err
	}
	c := &component{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(c.done)
		died <- c
	}()
	return c, nil
}

// exited reports whether the process has exited.
func (c *component) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// kill sends SIGKILL, the way a crashed or OOM-killed process dies, and waits
// until the process is reaped.
func (c *component) kill() error {
	if c == nil {
		return nil
	}
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-c.done:
		return nil
	case <-time.After(30 * time.Second):
		return fmt.Errorf("%s (pid %d) still running 30s after SIGKILL", c.name, c.cmd.Process.Pid)
	}
}

// stop asks the process to terminate (SIGTERM), and kills it after 10s.
func (c *component) stop() {
	if c == nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		_ = c.kill()
	}
}
