package testenv

import (
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// V2Healthy is a v2 volume of Longhorn 1.12+ attached on node-a, its
// engine (target) on node-a too, its one engine frontend (initiator) on
// node-a connected to it, two replicas on node-a and node-b. v2 replicas
// are not cloned for a switchover: the same replicas serve the new engine.
func V2Healthy(version, vol string) *Objects {
	e := EngineName(version, vol, 0)
	r0, r1 := ReplicaName(vol, 0, false), ReplicaName(vol, 1, false)
	v := NewVolume(vol, NodeA)
	v.Spec.Image, v.Spec.EngineImage = EngineImage, ""
	v.Spec.DataEngine = longhorn.DataEngineV2
	v.Spec.Migratable, v.Spec.AccessMode = false, longhorn.AccessModeRWO
	v.Spec.EngineNodeID, v.Status.CurrentEngineNodeID = NodeA, NodeA
	eng := v2Engine(NewEngine(e, vol, NodeA, true, r0, r1), "10.0.1.1")
	o := &Objects{Version: version,
		Volumes:  []*longhorn.Volume{v},
		Engines:  []*longhorn.Engine{eng},
		Replicas: []*longhorn.Replica{v2Replica(NewReplica(r0, vol, NodeA, e, true, vol+"-d0")), v2Replica(NewReplica(r1, vol, NodeB, e, true, vol+"-d1"))},
		VAs:      []*longhorn.VolumeAttachment{satisfiedVA(NewVA(vol, NodeA))},
		EFs:      []*longhorn.EngineFrontend{NewEngineFrontend(vol+"-ef-0", vol, NodeA, true, eng)},
	}
	return o
}

// satisfiedVA gives each ticket status the Satisfied condition Longhorn's
// VolumeAttachment controller writes (1.12.0's CRD requires conditions).
func satisfiedVA(va *longhorn.VolumeAttachment) *longhorn.VolumeAttachment {
	for id, ts := range va.Status.AttachmentTicketStatuses {
		ts.Conditions = []longhorn.Condition{{Type: "Satisfied", Status: "True"}}
		va.Status.AttachmentTicketStatuses[id] = ts
	}
	return va
}

func v2Engine(e *longhorn.Engine, ip string) *longhorn.Engine {
	e.Spec.Image, e.Spec.EngineImage = EngineImage, ""
	e.Spec.DataEngine = longhorn.DataEngineV2
	e.Status.IP, e.Status.Port = ip, 20001
	e.Status.Endpoint = ""
	return e
}

func v2Replica(r *longhorn.Replica) *longhorn.Replica {
	r.Spec.Image = EngineImage
	return r
}

// V2SwitchoverStuck is what Longhorn 1.12.0's engine switchover leaves when
// its update of the old engine fails (longhorn#13951): spec.engineNodeID
// moved to node-b, the frontend sends I/O to the new engine there, the new
// engine and the replicas were saved (the new engine active, the replicas
// naming it), and the old engine on node-a kept spec.active=true; the
// volume's status (status.currentEngineNodeID still node-a) was not saved.
func V2SwitchoverStuck(version, vol string) *Objects {
	o := V2Healthy(version, vol)
	v, old := o.Volumes[0], o.Engines[0]
	v.Spec.EngineNodeID = NodeB
	v.Status.SwitchoverState = "switching-over"
	var names []string
	for _, r := range o.Replicas {
		names = append(names, r.Name)
	}
	n := v2Engine(NewEngine(EngineName(version, vol, 1), vol, NodeB, true, names...), "10.0.1.2")
	o.Engines = append(o.Engines, n)
	for _, r := range o.Replicas {
		r.Spec.EngineName = n.Name
	}
	ef := o.EFs[0]
	ef.Spec.EngineName, ef.Spec.TargetIP, ef.Spec.TargetPort = n.Name, n.Status.IP, n.Status.Port
	ef.Status.TargetIP, ef.Status.TargetPort = n.Status.IP, n.Status.Port
	_ = old
	return o
}

// V2TwoFrontends: a v2 volume on node-a with a second active engine
// frontend on node-b, not connected.
func V2TwoFrontends(version, vol string) *Objects {
	o := V2Healthy(version, vol)
	ef := NewEngineFrontend(vol+"-ef-1", vol, NodeB, true, o.Engines[0])
	ef.Status.TargetIP, ef.Status.TargetPort, ef.Status.CurrentState = "", 0, longhorn.StateStopped
	o.EFs = append(o.EFs, ef)
	return o
}
