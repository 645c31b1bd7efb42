package main

// The running control plane and what serve does once it is ready: stop and
// start the kube-apiserver on request (for fault tests), keep the
// controller-manager alive across such an outage, and give up on any other
// exit.
//
// Requests come as signals to serve, sent by `scripts/cluster apiserver
// stop|start`: serve is the parent of every component (they die with it), so
// it alone may start them again.

import (
	"context"
	"fmt"
	"os"
	"syscall"
)

const (
	// apiserverStopSignal asks serve to SIGKILL the kube-apiserver.
	apiserverStopSignal = syscall.SIGUSR1
	// apiserverStartSignal asks serve to start the kube-apiserver again with
	// the same flags and port, and to wait for /readyz.
	apiserverStartSignal = syscall.SIGUSR2
	// apiserverStoppedFile exists in the state directory while the
	// kube-apiserver is stopped on request.
	apiserverStoppedFile = "apiserver.stopped"
)

// plane is the control plane serve supervises.
type plane struct {
	layout             clusterLayout
	server             string
	died               chan *component
	apiFlags, kcmFlags []string
	// apiserver and kcm are the current processes; nil while stopped.
	apiserver, kcm *component
	// kcmOutage is set when the apiserver was stopped on request during the
	// current controller-manager's life: its exit is then expected (it may
	// give up on a lost apiserver) and it is restarted, not fatal.
	kcmOutage bool
}

// supervise serves stop/start requests until ctx ends or a component exits
// unexpectedly.
func (p *plane) supervise(ctx context.Context, control <-chan os.Signal) error {
	for {
		select {
		case <-ctx.Done():
			fmt.Println("fieldwise-cluster: stopping")
			return nil
		case sig := <-control:
			var err error
			if sig == apiserverStopSignal {
				err = p.stopAPIServer()
			} else {
				err = p.startAPIServer(ctx)
			}
			if err != nil {
				return err
			}
		case c := <-p.died:
			switch {
			case c != p.apiserver && c != p.kcm:
				// A process stopped on request.
			case c == p.kcm && p.kcmOutage:
				fmt.Println("fieldwise-cluster: kube-controller-manager exited after the apiserver outage; restarting it")
				p.kcm = nil
				if p.apiserver != nil {
					if err := p.startControllerManager(); err != nil {
						return err
					}
				}
			default:
				return fmt.Errorf("%s exited; see %s", c.name, p.layout.path(c.name+".log"))
			}
		}
	}
}

// stopAPIServer kills the kube-apiserver with SIGKILL; etcd, serve and the
// controller-manager stay up.
func (p *plane) stopAPIServer() error {
	if p.apiserver == nil {
		return nil
	}
	old := p.apiserver
	p.apiserver = nil
	p.kcmOutage = true
	if err := old.kill(); err != nil {
		return err
	}
	_ = os.Remove(p.layout.path("apiserver.pid"))
	fmt.Println("fieldwise-cluster: kube-apiserver killed on request")
	return os.WriteFile(p.layout.path(apiserverStoppedFile), nil, 0o600)
}

// startAPIServer starts the kube-apiserver again with the flags (and so the
// port) it had, waits for /readyz, and restarts the controller-manager if it
// exited meanwhile. A start that fails is fatal: the fault test sees the
// cluster gone rather than half up.
func (p *plane) startAPIServer(ctx context.Context) error {
	if p.apiserver != nil {
		return nil
	}
	apiserver, err := startComponent(p.layout, p.died, "apiserver", p.apiFlags)
	if err != nil {
		return err
	}
	p.apiserver = apiserver
	if err := waitReady(ctx, []*component{apiserver}, p.layout, p.server); err != nil {
		return fmt.Errorf("restarting the kube-apiserver: %w", err)
	}
	if p.kcm == nil {
		if err := p.startControllerManager(); err != nil {
			return err
		}
	}
	fmt.Println("fieldwise-cluster: kube-apiserver started again and ready")
	return os.Remove(p.layout.path(apiserverStoppedFile))
}

func (p *plane) startControllerManager() error {
	kcm, err := startComponent(p.layout, p.died, "controller-manager", p.kcmFlags)
	if err != nil {
		return err
	}
	p.kcm, p.kcmOutage = kcm, false
	return nil
}

// stopAll stops the components, controller-manager first.
func (p *plane) stopAll() {
	p.kcm.stop()
	p.apiserver.stop()
}
