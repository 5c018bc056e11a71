//go:build tools

// Package tools pins the real Kubernetes control plane and etcd that DeepShare's
// Kubernetes tests run against (scripts/k8s/build-tools.sh builds them; docs/kubernetes.md).
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
