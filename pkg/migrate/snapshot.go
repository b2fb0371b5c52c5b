package migrate

import (
	"context"
	"fmt"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/readstate"
)

// snapshot is one read of everything a migration step looks at: the volume,
// its engines and replicas (by the longhornvolume label, as longhorn-manager
// lists them) and, on 1.5+, its VolumeAttachment. Each step decides from a
// fresh snapshot, never from an older one.
type snapshot struct {
	version  longhorn.Version
	volume   longhorn.Volume
	kube     kubernetesStatus
	engines  []longhorn.Engine // oldest first
	replicas []longhorn.Replica
	va       *longhorn.VolumeAttachment // nil before 1.5 or when absent
	read     time.Time
	// unavailable names the replicas, of those not running, that
	// Longhorn's volume controller leaves out of a migration
	// (longhorn.ReplicaUnavailable: their node down or deleted, their disk
	// not Ready, or not scheduled).
	unavailable map[string]bool
}

// kubernetesStatus tells whether a pod uses the volume. Longhorn's
// kubernetes-pv controller keeps it.
type kubernetesStatus = longhorn.KubernetesStatus

// notFoundError is a volume (or node) that does not exist.
type notFoundError struct{ kind, name, ns string }

func (e *notFoundError) Error() string {
	return fmt.Sprintf("%s %q not found in namespace %q", e.kind, e.name, e.ns)
}

// readSnapshot reads the volume and what belongs to it with readstate's
// per-volume reader.
func readSnapshot(ctx context.Context, c *readstate.Client, ns, vol string, ver longhorn.Version) (*snapshot, error) {
	r, err := readstate.ReadVolumeAt(ctx, c, ns, vol, ver, "setting "+longhorn.VersionSetting)
	if err != nil {
		return nil, err
	}
	if !r.Found {
		return nil, &notFoundError{"volume", vol, ns}
	}
	st := r.State
	s := &snapshot{version: ver, read: st.Now, volume: st.Volumes[0], engines: st.Engines, replicas: st.Replicas}
	if len(st.VolumeAttachments) > 0 {
		s.va = &st.VolumeAttachments[0]
	}
	s.kube = s.volume.Status.KubernetesStatus
	if err := s.readUnavailable(ctx, c, ns); err != nil {
		return nil, err
	}
	return s, nil
}

// readUnavailable fills s.unavailable, reading the node of each replica
// that is not running (none, most of the time).
func (s *snapshot) readUnavailable(ctx context.Context, c *readstate.Client, ns string) error {
	nodes := map[string]*longhorn.Node{}
	for i := range s.replicas {
		r := &s.replicas[i]
		if r.Status.CurrentState == longhorn.StateRunning {
			continue
		}
		n, read := nodes[r.Spec.NodeID]
		if !read && r.Spec.NodeID != "" {
			var err error
			if n, err = getNode(ctx, c, ns, r.Spec.NodeID); err != nil {
				return err
			}
			nodes[r.Spec.NodeID] = n
		}
		if longhorn.ReplicaUnavailable(r, n) {
			if s.unavailable == nil {
				s.unavailable = map[string]bool{}
			}
			s.unavailable[r.Name] = true
		}
	}
	return nil
}

// activeEngines are engines with spec.active and no deletionTimestamp.
func (s *snapshot) activeEngines() []*longhorn.Engine {
	return longhorn.Select(s.engines, (*longhorn.Engine).IsActive)
}

// enginesOn lists the engines whose spec.nodeID is node.
func (s *snapshot) enginesOn(node string) []*longhorn.Engine {
	return longhorn.Select(s.engines, func(e *longhorn.Engine) bool { return e.Spec.NodeID == node })
}

// replicasOf lists the replicas serving engine.
func (s *snapshot) replicasOf(engine string) []*longhorn.Replica {
	return longhorn.Select(s.replicas, func(r *longhorn.Replica) bool { return r.Spec.EngineName == engine })
}

// csiTicketsOn returns the csi-attacher tickets for node.
func (s *snapshot) csiTicketsOn(node string) []longhorn.AttachmentTicket {
	if s.va == nil {
		return nil
	}
	var out []longhorn.AttachmentTicket
	for _, t := range s.va.CSITickets() {
		if t.NodeID == node {
			out = append(out, t)
		}
	}
	return out
}

// csiSatisfiedOn reports whether a csi-attacher ticket for node is satisfied.
func (s *snapshot) csiSatisfiedOn(node string) bool {
	for _, t := range s.csiTicketsOn(node) {
		if s.va.Satisfied(t.ID) {
			return true
		}
	}
	return false
}

// ticketMessage is the Satisfied condition message of node's csi ticket:
// Longhorn says there why a migration ticket waits.
func (s *snapshot) ticketMessage(node string) string {
	for _, t := range s.csiTicketsOn(node) {
		st, ok := s.va.Status.AttachmentTicketStatuses[t.ID]
		if !ok {
			continue
		}
		for _, c := range st.Conditions {
			if c.Type == "Satisfied" && c.Message != "" {
				return c.Message
			}
		}
	}
	return ""
}

// state wraps the snapshot for pkg/detect, so migrate and scan/fix agree on
// what a state is called.
func (s *snapshot) state(ns string) *longhorn.State {
	st := &longhorn.State{
		Namespace: ns, Version: s.version, VersionSource: "setting " + longhorn.VersionSetting, Now: s.read,
		Volumes: []longhorn.Volume{s.volume}, Engines: s.engines, Replicas: s.replicas,
	}
	if s.va != nil {
		st.VolumeAttachments = []longhorn.VolumeAttachment{*s.va}
	}
	return st
}

// classify runs pkg/detect on this one volume.
func (s *snapshot) classify(ns string) (detect.Finding, bool) {
	return detect.ClassifyVolume(s.state(ns), s.volume.Name, detect.Options{SkipOrphans: true})
}

// inUseByPods lists the pods Longhorn's kubernetesStatus says use the volume
// now (lastPodRefAt is set once the last pod is gone).
func (s *snapshot) inUseByPods() []string {
	if s.kube.LastPodRefAt != "" {
		return nil
	}
	var out []string
	for _, w := range s.kube.WorkloadsStatus {
		if w.PodName == "" {
			continue
		}
		p := w.PodName
		if w.PodStatus != "" {
			p += " (" + w.PodStatus + ")"
		}
		out = append(out, p)
	}
	return out
}
