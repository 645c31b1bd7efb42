package main

// serve brings the control plane up, writes the kubeconfigs, declares the
// cluster ready by writing DIR/ready, then supervises it (plane.go) until
// SIGTERM or an unexpected exit of a component.

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// clusterLayout names every file the harness writes into its state directory.
type clusterLayout struct {
	dir string
}

func (l clusterLayout) path(name string) string { return filepath.Join(l.dir, name) }

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	dir := fs.String("dir", "", "state directory (created; must be empty or absent)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("--dir is required")
	}
	layout := clusterLayout{dir: *dir}
	for _, d := range []string{layout.dir, layout.path("pki"), layout.path("etcd")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	_ = os.Remove(layout.path("ready"))
	if err := os.WriteFile(layout.path("serve.pid"), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return err
	}

	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	etcdClientPort, etcdPeerPort, apiPort := ports[0], ports[1], ports[2]

	creds, err := writePKI(layout)
	if err != nil {
		return fmt.Errorf("writing certificates: %w", err)
	}
	if err := os.WriteFile(layout.path("audit-policy.yaml"), []byte(auditPolicy), 0o600); err != nil {
		return err
	}

	etcd, err := startEtcd(layout.path("etcd"), etcdClientPort, etcdPeerPort)
	if err != nil {
		return fmt.Errorf("starting etcd: %w", err)
	}
	defer etcd.Close()

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	// Registered before anything starts: SIGUSR1's default action would kill serve.
	control := make(chan os.Signal, 4)
	signal.Notify(control, apiserverStopSignal, apiserverStartSignal)
	defer signal.Stop(control)

	server := fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	p := &plane{
		layout:   layout,
		server:   server,
		died:     make(chan *component, 8),
		apiFlags: apiserverFlags(layout, etcdClientPort, apiPort),
		kcmFlags: controllerManagerFlags(layout),
	}
	defer p.stopAll()
	if p.apiserver, err = startComponent(layout, p.died, "apiserver", p.apiFlags); err != nil {
		return err
	}

	if err := writeKubeconfigs(layout, server, creds); err != nil {
		return fmt.Errorf("writing kubeconfigs: %w", err)
	}
	if err := waitReady(ctx, []*component{p.apiserver}, layout, server); err != nil {
		return err
	}
	if err := grantRestrictedView(ctx, layout); err != nil {
		return fmt.Errorf("granting the restricted user read access: %w", err)
	}

	if p.kcm, err = startComponent(layout, p.died, "controller-manager", p.kcmFlags); err != nil {
		return err
	}
	if err := waitDefaultServiceAccount(ctx, []*component{p.apiserver, p.kcm}, layout); err != nil {
		return err
	}

	if err := os.WriteFile(layout.path("ready"), []byte(server+"\n"), 0o600); err != nil {
		return err
	}
	fmt.Printf("fieldwise-cluster ready at %s (KUBECONFIG=%s)\n", server, layout.path("kubeconfig"))
	return p.supervise(ctx, control)
}

func freePorts(n int) ([]int, error) {
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// credentials holds the PEM material the kubeconfigs embed.
type credentials struct {
	ca, admin, restricted, controllerManager *keyPair
}

func writePKI(l clusterLayout) (*credentials, error) {
	pki := l.path("pki")
	ca, err := newCA()
	if err != nil {
		return nil, err
	}
	if err := ca.write(pki, "ca"); err != nil {
		return nil, err
	}
	serving, err := ca.issue("kube-apiserver", nil, []string{"127.0.0.1", "localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "10.96.0.1"})
	if err != nil {
		return nil, err
	}
	if err := serving.write(pki, "apiserver"); err != nil {
		return nil, err
	}
	admin, err := ca.issue("fieldwise-admin", []string{"system:masters"}, nil)
	if err != nil {
		return nil, err
	}
	restricted, err := ca.issue("fieldwise-restricted", nil, nil)
	if err != nil {
		return nil, err
	}
	kcm, err := ca.issue("system:kube-controller-manager", []string{"system:masters"}, nil)
	if err != nil {
		return nil, err
	}
	saKey, saKeyPEM, err := newKey()
	if err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(pki, "sa.key"), saKeyPEM, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(pki, "sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600); err != nil {
		return nil, err
	}
	return &credentials{ca: ca, admin: admin, restricted: restricted, controllerManager: kcm}, nil
}

func startEtcd(dataDir string, clientPort, peerPort int) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Dir = dataDir
	cfg.Logger = "zap"
	cfg.LogLevel = "error"
	clientURL, _ := parseURL(fmt.Sprintf("http://127.0.0.1:%d", clientPort))
	peerURL, _ := parseURL(fmt.Sprintf("http://127.0.0.1:%d", peerPort))
	cfg.ListenClientUrls = []urlT{*clientURL}
	cfg.AdvertiseClientUrls = []urlT{*clientURL}
	cfg.ListenPeerUrls = []urlT{*peerURL}
	cfg.AdvertisePeerUrls = []urlT{*peerURL}
	cfg.InitialCluster = fmt.Sprintf("%s=%s", cfg.Name, peerURL.String())
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, fmt.Errorf("etcd not ready after 60s")
	}
}

func apiserverFlags(l clusterLayout, etcdPort, apiPort int) []string {
	pki := l.path("pki")
	return []string{
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", etcdPort),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", apiPort),
		"--cert-dir=" + pki,
		"--tls-cert-file=" + filepath.Join(pki, "apiserver.crt"),
		"--tls-private-key-file=" + filepath.Join(pki, "apiserver.key"),
		"--client-ca-file=" + filepath.Join(pki, "ca.crt"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + filepath.Join(pki, "sa.pub"),
		"--service-account-signing-key-file=" + filepath.Join(pki, "sa.key"),
		"--service-cluster-ip-range=10.96.0.0/16",
		"--authorization-mode=RBAC",
		// There is no network for endpoints to point at; loopback addresses are
		// invalid endpoints, so the reconciler would only log errors.
		"--endpoint-reconciler-type=none",
		"--audit-policy-file=" + l.path("audit-policy.yaml"),
		"--audit-log-path=" + l.path("audit.log"),
		"--audit-log-mode=blocking",
		"--profiling=false",
		"--v=1",
	}
}

func controllerManagerFlags(l clusterLayout) []string {
	pki := l.path("pki")
	return []string{
		"--kubeconfig=" + l.path("controller-manager.kubeconfig"),
		"--leader-elect=false",
		"--secure-port=0",
		"--controllers=*",
		"--use-service-account-credentials=false",
		"--service-account-private-key-file=" + filepath.Join(pki, "sa.key"),
		"--root-ca-file=" + filepath.Join(pki, "ca.crt"),
		"--cluster-signing-cert-file=" + filepath.Join(pki, "ca.crt"),
		"--cluster-signing-key-file=" + filepath.Join(pki, "ca.key"),
		"--v=1",
	}
}

// auditPolicy records every request at Metadata level, so tests can count
// exactly which write requests reached the server.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
`
