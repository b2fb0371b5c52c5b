// Command longhorn-controllers runs the VolumeController and the
// VolumeAttachmentController of the longhorn-manager version its module
// requires, unmodified, one of each per --nodes entry, sharing one
// DataStore. This file is the main.go of every release from 1.5 on (each
// release directory links it); everything else (flags, clients, control
// API) is package harness, and test/longhorn/README.md describes the
// binary.
package main

import (
	"github.com/sirupsen/logrus"

	"github.com/longhorn/longhorn-manager/controller"
	"github.com/longhorn/longhorn-manager/datastore"
	longhorn "github.com/longhorn/longhorn-manager/k8s/pkg/apis/longhorn/v1beta2"
	lhclientset "github.com/longhorn/longhorn-manager/k8s/pkg/client/clientset/versioned"
	"github.com/longhorn/longhorn-manager/util"

	"github.com/longhorn-engines/kubectl-longhorn-engines/test/longhorn/control/harness"
)

func main() { harness.Main(longhorn.SchemeBuilder.AddToScheme, lhclientset.NewForConfig, release) }

// release: from 1.5 the informer factories come from util. The
// controllers' constructors return an error from 1.7 on, which
// harness.Controllers takes as it comes.
func release(c *harness.Clients, lhClient *lhclientset.Clientset) (*harness.Longhorn, error) {
	factories := util.NewInformerFactories(c.Namespace, c.Kube, lhClient, harness.Resync)
	ds := datastore.NewDataStore(c.Namespace, lhClient, c.Kube, c.Extensions, factories)
	return &harness.Longhorn{Start: factories.Start, Sync: ds.Sync, Workers: controller.Workers,
		Node: func(node string, logger logrus.FieldLogger) ([]harness.Runner, error) {
			var cs harness.Controllers
			cs.Add(controller.NewVolumeController(logger, ds, c.Scheme, c.Events, c.Namespace, node, harness.ShareManagerImage, util.NewAtomicCounter()))
			cs.Add(controller.NewLonghornVolumeAttachmentController(logger, ds, c.Scheme, c.Events, node, c.Namespace))
			return cs.Runners()
		},
	}, nil
}
