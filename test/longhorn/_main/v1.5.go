// Command longhorn-controllers runs the VolumeController and the
// VolumeAttachmentController of the longhorn-manager version its module
// requires, unmodified, one of each per --nodes entry, sharing one
// DataStore. This file is the main.go of every release with the
// constructors of 1.5 and 1.6 (each release directory links it);
// everything else (flags, clients, control API) is package harness, and
// test/longhorn/README.md describes the binary.
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

func main() { harness.Main(longhorn.SchemeBuilder.AddToScheme, release) }

// release: from 1.5 the informer factories come from util; until 1.7 the
// constructors return no error.
func release(c *harness.Clients) (*harness.Longhorn, error) {
	lhClient, err := lhclientset.NewForConfig(c.Longhorn)
	if err != nil {
		return nil, err
	}
	factories := util.NewInformerFactories(c.Namespace, c.Kube, lhClient, harness.Resync)
	ds := datastore.NewDataStore(c.Namespace, lhClient, c.Kube, c.Extensions, factories)
	return &harness.Longhorn{Start: factories.Start, Sync: ds.Sync, Workers: controller.Workers,
		Node: func(node string, logger logrus.FieldLogger) ([]harness.Runner, error) {
			vc := controller.NewVolumeController(logger, ds, c.Scheme, c.Events, c.Namespace, node, harness.ShareManagerImage, util.NewAtomicCounter())
			vac := controller.NewLonghornVolumeAttachmentController(logger, ds, c.Scheme, c.Events, node, c.Namespace)
			return []harness.Runner{vc.Run, vac.Run}, nil
		},
	}, nil
}
