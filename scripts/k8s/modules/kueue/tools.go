//go:build tools

// Package tools pins Kueue (sigs.k8s.io/kueue), the real admission controller that DeepShare's
// Kubernetes testbed compares with (docs/kubernetes.md). A module of its own: Kueue pins its
// own k8s.io/* libraries and controller-runtime, and one module with the control plane would
// let MVS drag them to the control plane's versions.
package tools

import (
	_ "sigs.k8s.io/kueue/cmd/kueue"
)
