// The constructor calls of every Longhorn release from 1.5 on (release.go
// of each release directory, beside main.go).
package main

import (
	"github.com/sirupsen/logrus"

	"github.com/longhorn/longhorn-manager/controller"
	"github.com/longhorn/longhorn-manager/datastore"
	lhclientset "github.com/longhorn/longhorn-manager/k8s/pkg/client/clientset/versioned"
	"github.com/longhorn/longhorn-manager/util"

	"github.com/longhorn-engines/kubectl-longhorn-engines/test/longhorn/control/harness"
)

// release: from 1.5 the informer factories come from util. The
// controllers' constructors return an error from 1.7 on, which
// harness.Controllers takes as it comes.
func release(c *harness.Clients, lhClient *lhclientset.Clientset) (*harness.Longhorn, error) {
	factories := util.NewInformerFactories(c.Namespace, c.Kube, lhClient, harness.Resync)
	ds := datastore.NewDataStore(c.Namespace, lhClient, c.Kube, c.Extensions, factories)
	return &harness.Longhorn{Start: factories.Start, Sync: ds.Sync, Workers: controller.Workers,
		Node: func(node string, logger logrus.FieldLogger, cs *harness.Controllers) {
			cs.Add(controller.NewVolumeController(logger, ds, c.Scheme, c.Events, c.Namespace, node, harness.ShareManagerImage, util.NewAtomicCounter()))
			cs.Add(controller.NewLonghornVolumeAttachmentController(logger, ds, c.Scheme, c.Events, node, c.Namespace))
		},
	}, nil
}
