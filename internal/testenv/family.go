package testenv

import "github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"

// StaleMigrationNodeID: a detached volume whose status.currentMigrationNodeID
// stayed node-b (longhorn#11479), its engine stopped, with a
// VolumeAttachment and no ticket on 1.5+: nothing asks for it. fix clears
// the field on Longhorn 1.5.3 (docs/troubleshooting-migration-family.md).
func StaleMigrationNodeID(version, vol string) *Objects {
	o := Healthy(version, vol)
	v := o.Volumes[0]
	v.Spec.NodeID, v.Status.CurrentNodeID, v.Status.State = "", "", longhorn.VolumeStateDetached
	v.Status.CurrentMigrationNodeID = NodeB
	e := o.Engines[0]
	e.Spec.NodeID, e.Spec.DesireState, e.Status.CurrentState = "", longhorn.StateStopped, longhorn.StateStopped
	if len(o.VAs) > 0 {
		o.VAs = []*longhorn.VolumeAttachment{NewVA(vol)}
	}
	return o
}
