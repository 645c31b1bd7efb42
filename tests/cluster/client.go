package main

// Talking to the freshly started apiserver: kubeconfigs, readiness and the
// little bootstrap the tests rely on (RBAC for the restricted user).

import (
	"context"
	"fmt"
	"net/url"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

type urlT = url.URL

func parseURL(s string) (*url.URL, error) { return url.Parse(s) }

const (
	adminContext      = "fieldwise"
	restrictedContext = "fieldwise-restricted"
	restrictedUser    = "fieldwise-restricted"
)

func kubeconfig(server string, ca *keyPair, users map[string]*keyPair, current string) *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["fieldwise"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca.certPEM}
	for name, kp := range users {
		cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: kp.certPEM, ClientKeyData: kp.keyPEM}
		cfg.Contexts[name] = &clientcmdapi.Context{Cluster: "fieldwise", AuthInfo: name, Namespace: "default"}
	}
	cfg.CurrentContext = current
	return cfg
}

func writeKubeconfigs(l clusterLayout, server string, c *credentials) error {
	both := kubeconfig(server, c.ca, map[string]*keyPair{adminContext: c.admin, restrictedContext: c.restricted}, adminContext)
	if err := clientcmd.WriteToFile(*both, l.path("kubeconfig")); err != nil {
		return err
	}
	restricted := kubeconfig(server, c.ca, map[string]*keyPair{restrictedContext: c.restricted}, restrictedContext)
	if err := clientcmd.WriteToFile(*restricted, l.path("restricted.kubeconfig")); err != nil {
		return err
	}
	kcm := kubeconfig(server, c.ca, map[string]*keyPair{"controller-manager": c.controllerManager}, "controller-manager")
	return clientcmd.WriteToFile(*kcm, l.path("controller-manager.kubeconfig"))
}

func adminClient(l clusterLayout) (*kubernetes.Clientset, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", l.path("kubeconfig"))
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = "fieldwise-cluster"
	return kubernetes.NewForConfig(cfg)
}

// poll calls check every 200ms until it reports done, one of the watched
// components exits, or the deadline passes.
func poll(ctx context.Context, watched []*component, what string, timeout time.Duration, check func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		ok, err := check()
		if ok {
			return nil
		}
		last = err
		for _, c := range watched {
			if c.exited() {
				return fmt.Errorf("%s exited while waiting for %s", c.name, what)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("timed out after %s waiting for %s (last error: %v)", timeout, what, last)
}

func waitReady(ctx context.Context, watched []*component, l clusterLayout, server string) error {
	client, err := adminClient(l)
	if err != nil {
		return err
	}
	return poll(ctx, watched, server+"/readyz", 5*time.Minute, func() (bool, error) {
		body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil && string(body) == "ok", err
	})
}

func grantRestrictedView(ctx context.Context, l clusterLayout) error {
	client, err := adminClient(l)
	if err != nil {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "fieldwise-restricted-view"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "view"},
		Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: restrictedUser}},
	}
	_, err = client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// waitDefaultServiceAccount waits for the controller-manager's first visible
// work: without the default ServiceAccount, ReplicaSets cannot create Pods.
func waitDefaultServiceAccount(ctx context.Context, watched []*component, l clusterLayout) error {
	client, err := adminClient(l)
	if err != nil {
		return err
	}
	return poll(ctx, watched, "the default ServiceAccount", 3*time.Minute, func() (bool, error) {
		_, err := client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, err
	})
}
