package lhsim

import (
	"context"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Instance-only mode (Options.InstanceOnly) is the simulator's half of a
// test world in which Longhorn's own volume and VolumeAttachment
// controllers run (test/longhorn/<release>, internal/lhreal). What no
// instance manager can do here stays simulated:
//
//   - engine and replica processes and their status, the instance
//     managers' process lists, removing the finalizer of a deleted engine
//     or replica once its process is stopped, and the replica controller's
//     data clean-up decision (WipedDirs, DataLost) — the engine and
//     replica controllers, which need instance managers, do not run in the
//     real binary;
//   - what Longhorn's mutating webhooks add, after the fact (the test
//     server has no admission webhooks): the longhorn.io finalizer on the
//     first sight of a Volume, Engine, Replica or VolumeAttachment, the
//     longhornvolume label, an engine's empty replicaAddressMap and
//     upgradedReplicaAddressMap, and a VolumeAttachment's ticket
//     generations. Because it is after the fact, an object deleted before
//     the simulator saw it goes without a finalizer;
//   - the EngineImage of the release's engine image, deployed on every node
//     AddNode created (the volume controller checks its readiness before
//     it starts an engine or a migration), when the server serves that
//     resource (Longhorn's own CRDs do, the plugin's test CRDs do not).
//
// Of the client-side methods, AddNode, SetNodeReady, CreateVolume (the
// Volume and, on 1.5+, its VolumeAttachment, as Longhorn's API creates
// them), Attach and Detach (what the CSI driver writes), State, WaitFor,
// Await, WipedDirs, DataLost, Processes, KillProcess and Inject with the
// instance-layer faults (MigrationEngineNeverReady, EngineCrash,
// FinalizerStuck, OrphanProcess) work as in the full mode. These only make
// sense with the simulator's own controllers and report nothing here:
// SyncErrors, SyncErrorCount, LastSyncError and Logs of volume syncs (read
// the real controllers' log instead), and the faults FailEngineDelete and
// FailEngineUpdate (use the real binary's fault API). CreateVolume's
// VolumeOptions.ReplicaNodes is ignored: Longhorn's scheduler places the
// replicas.

// engineImages is Longhorn's EngineImage resource, which only the
// instance-only mode writes.
var engineImages = schema.GroupVersionResource{Group: longhorn.Group, Version: longhorn.APIVersionName, Resource: "engineimages"}

// engineImageName is Longhorn's GetEngineImageChecksumName: "ei-" and the
// first 8 hex characters of the image's SHA-512.
func engineImageName(image string) string {
	sum := sha512.Sum512([]byte(strings.TrimSpace(image)))
	return "ei-" + hex.EncodeToString(sum[:])[:8]
}

// imageChecksumName is the instance-manager-image label Longhorn's
// datastore selects instance managers by: "imi-" and the first 8 hex
// characters of the SHA-512 of the image's canonical name.
func imageChecksumName(image string) string {
	canonical := strings.NewReplacer(":", "-", "/", "-").Replace(image)
	sum := sha512.Sum512([]byte(strings.TrimSpace(canonical)))
	return "imi-" + hex.EncodeToString(sum[:])[:8]
}

// writeEngineImage creates or refreshes the EngineImage of the release's
// engine image, deployed on every Longhorn Node in the namespace. A server
// that does not serve EngineImages is left alone.
func (s *Sim) writeEngineImage(ctx context.Context) error {
	return s.DeployEngineImage(ctx, s.engineImage())
}

// DeployEngineImage creates or refreshes the EngineImage of img, deployed
// on every Longhorn Node in the namespace, as writeEngineImage does for the
// release's own image: internal/explore runs volumes on a second, older one.
// Each image reports a gitCommit of its own, so that Longhorn live-upgrades
// an attached volume from one to another.
func (s *Sim) DeployEngineImage(ctx context.Context, img string) error {
	name := engineImageName(img)
	cl := s.dyn.Resource(engineImages).Namespace(s.ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		nodes, err := s.client(longhorn.Nodes).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		deployed := map[string]any{}
		for _, n := range nodes.Items {
			deployed[n.GetName()] = true
		}
		u, err := cl.Get(ctx, name, metav1.GetOptions{})
		if isNotFound(err) {
			u = newObject("EngineImage", s.ns, name)
			u.SetFinalizers([]string{longhorn.Finalizer})
			u.Object["spec"] = map[string]any{"image": img}
			if u, err = cl.Create(ctx, u, metav1.CreateOptions{}); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		st := map[string]any{
			"state": "deployed", "refCount": int64(0), "noRefSince": "",
			"ownerID": "", "nodeDeploymentMap": deployed,
			"conditions": []any{map[string]any{"type": "ready", "status": "True", "reason": "", "message": "",
				"lastTransitionTime": now(), "lastProbeTime": ""}},
			// A build of each image's own: Longhorn delays a live engine
			// upgrade between images of one gitCommit until detach, so a
			// shared one would freeze every attached volume it picks.
			"incompatible": false, "gitCommit": strings.TrimPrefix(name, "ei-"), "buildDate": "", "version": s.ver.String(),
			"cliAPIVersion": int64(8), "cliAPIMinVersion": int64(3),
			"controllerAPIVersion": int64(3), "controllerAPIMinVersion": int64(3),
			"dataFormatVersion": int64(1), "dataFormatMinVersion": int64(1),
		}
		_ = unstructured.SetNestedMap(u.Object, st, "status")
		_, err = cl.UpdateStatus(ctx, u, metav1.UpdateOptions{})
		return err
	})
	if isNotFound(err) {
		return nil // no EngineImage CRD: the plugin's own test CRDs
	}
	if err != nil {
		return fmt.Errorf("lhsim: write engine image %s: %w", name, err)
	}
	return nil
}

// firstSight records that the webhook "saw the create" of an object, so
// that the finalizer is added once and never put back after someone else
// removed it.
func (s *Sim) firstSight(plural, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.admitted == nil {
		s.admitted = map[string]bool{}
	}
	k := plural + "/" + name
	if s.admitted[k] {
		return false
	}
	s.admitted[k] = true
	return true
}

// admit applies the engine and replica mutators. done says the object was
// written (its update event brings the sync back) or is gone.
func (s *Sim) admit(ctx context.Context, r longhorn.Resource, name string) (bool, error) {
	u, err := s.getU(ctx, r, name)
	if isNotFound(err) {
		return false, nil // the sync handles the vanished process
	}
	if err != nil {
		return false, err
	}
	if u.GetDeletionTimestamp() != nil {
		return false, nil
	}
	vol, _, _ := unstructured.NestedString(u.Object, "spec", "volumeName")
	changed := s.mutate(r, u, vol)
	if r == longhorn.Engines {
		for _, f := range []string{"replicaAddressMap", "upgradedReplicaAddressMap"} {
			if m, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", f); !ok || m == nil {
				_ = unstructured.SetNestedMap(u.Object, map[string]any{}, "spec", f)
				changed = true
			}
		}
	}
	if !changed {
		return false, nil
	}
	return true, s.writeAdmitted(ctx, r, u)
}

// mutate does what every mutator does: it adds the finalizer when it first
// sees the object and labels it with its volume vol (when known). It says
// whether u changed.
func (s *Sim) mutate(r longhorn.Resource, u *unstructured.Unstructured, vol string) bool {
	changed := false
	if s.firstSight(r.Plural, u.GetName()) && !hasFinalizer(u) {
		u.SetFinalizers(append(u.GetFinalizers(), longhorn.Finalizer))
		changed = true
	}
	if vol != "" && u.GetLabels()[longhorn.VolumeLabel] != vol {
		setLabel(u, longhorn.VolumeLabel, vol)
		changed = true
	}
	return changed
}

// writeAdmitted writes a mutated object; when it is gone or changed
// meanwhile, a newer event follows.
func (s *Sim) writeAdmitted(ctx context.Context, r longhorn.Resource, u *unstructured.Unstructured) error {
	_, err := s.update(ctx, r, u)
	if isNotFound(err) || isConflict(err) {
		return nil
	}
	return err
}

// admitVolume applies the volume mutator's finalizer and label.
func (s *Sim) admitVolume(ctx context.Context, name string) error {
	u, err := s.getU(ctx, longhorn.Volumes, name)
	if isNotFound(err) || (err == nil && u.GetDeletionTimestamp() != nil) {
		return nil
	}
	if err != nil {
		return err
	}
	if !s.mutate(longhorn.Volumes, u, name) {
		return nil
	}
	return s.writeAdmitted(ctx, longhorn.Volumes, u)
}

// admitVolumeAttachment applies the VolumeAttachment mutator: finalizer,
// label, and the ticket generations.
func (s *Sim) admitVolumeAttachment(ctx context.Context, vol string) error {
	if !s.b.va {
		return nil
	}
	u, va, err := getAs[longhorn.VolumeAttachment](ctx, s, longhorn.VolumeAttachments, vol)
	if isNotFound(err) || (err == nil && u.GetDeletionTimestamp() != nil) {
		return nil
	}
	if err != nil {
		return err
	}
	changed := s.mutate(longhorn.VolumeAttachments, u, va.Spec.Volume)
	if s.mutateTickets(u, va) {
		changed = true
	}
	if !changed {
		s.rememberTickets(va.Name, va)
		return nil
	}
	_, err = s.update(ctx, longhorn.VolumeAttachments, u)
	if isNotFound(err) || isConflict(err) {
		return nil
	}
	if err == nil {
		s.rememberTickets(va.Name, va)
	}
	return err
}

// EngineImage is the engine image the simulator's volumes name and its
// EngineImage object deploys.
func (s *Sim) EngineImage() string { return s.engineImage() }

// InstanceManagerImage is the image of the simulated instance managers.
func (s *Sim) InstanceManagerImage() string { return s.imImage() }
