// Command fieldwise-cluster runs a real, local Kubernetes control plane for
// fieldwise's end-to-end tests: an embedded etcd, the upstream kube-apiserver
// and the upstream kube-controller-manager, all on 127.0.0.1.
//
// One binary plays every part so that a single cached build serves the whole
// harness. `serve` is the orchestrator; it re-executes this binary as
// `apiserver` and `controller-manager` so each component keeps its own process,
// flags and metrics registry, exactly as in a real cluster.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	kubeapiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	kubecontrollermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	if len(os.Args) < 2 && componentNames[filepath.Base(os.Args[0])] == "" {
		usage()
	}
	sub, rest := os.Args[1], os.Args[2:]
	// Components are started with argv[0] set to their upstream binary name,
	// because client-go derives the user agent, and so the managedFields
	// manager name ("kube-controller-manager"), from argv[0].
	if component, ok := componentNames[filepath.Base(os.Args[0])]; ok {
		sub, rest = component, os.Args[1:]
	}
	switch sub {
	case "serve":
		if err := serve(rest); err != nil {
			fmt.Fprintf(os.Stderr, "fieldwise-cluster: %v\n", err)
			os.Exit(1)
		}
	case "apiserver":
		cmd := kubeapiserver.NewAPIServerCommand()
		cmd.SetArgs(rest)
		if err := cmd.Execute(); err != nil {
			os.Exit(1)
		}
	case "controller-manager":
		cmd := kubecontrollermanager.NewControllerManagerCommand()
		cmd.SetArgs(rest)
		if err := cmd.Execute(); err != nil {
			os.Exit(1)
		}
	default:
		usage()
	}
}

// componentNames maps upstream binary names to subcommands.
var componentNames = map[string]string{
	"kube-apiserver":          "apiserver",
	"kube-controller-manager": "controller-manager",
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: fieldwise-cluster serve --dir DIR | apiserver FLAGS... | controller-manager FLAGS...")
	os.Exit(2)
}
