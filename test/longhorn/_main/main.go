// Command longhorn-controllers runs the VolumeController (and from 1.5 the
// VolumeAttachmentController) of the longhorn-manager version its module
// requires, unmodified, one of each per --nodes entry, sharing one
// DataStore. This file is the main.go of every release (each release
// directory links it, and beside it as release.go the file of its
// constructor family: v1.4.go or v1.5.go); everything else (flags,
// clients, control API) is package harness, and test/longhorn/README.md
// describes the binary.
package main

import (
	longhorn "github.com/longhorn/longhorn-manager/k8s/pkg/apis/longhorn/v1beta2"
	lhclientset "github.com/longhorn/longhorn-manager/k8s/pkg/client/clientset/versioned"

	"github.com/longhorn-engines/kubectl-longhorn-engines/test/longhorn/control/harness"
)

func main() { harness.Main(longhorn.SchemeBuilder.AddToScheme, lhclientset.NewForConfig, release) }
