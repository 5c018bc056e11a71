//go:build tools

// Package tools pins KWOK, which plays the kubelets of DeepShare's fake GPU nodes in the
// Kubernetes tests. A module of its own: KWOK pins its own k8s.io/* libraries, and one
// module with the control plane would let MVS drag them to the control plane's versions.
package tools

import (
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
