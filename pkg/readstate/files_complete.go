package readstate

import (
	"fmt"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// missingKinds says what -f input lacks that the verdict needs: Engine and
// Replica objects for the volumes given (every Longhorn volume has an
// engine and at least one replica), and on Longhorn 1.5 and later their
// VolumeAttachment objects (the migration tickets). A check made without
// them calls a stuck volume healthy, so each phrase makes the check
// incomplete (exit 2), as a bundle without engines.yaml does. st holds the
// selected volumes only.
func missingKinds(st *longhorn.State) []string {
	if len(st.Volumes) == 0 {
		return nil
	}
	get := func(r longhorn.Resource) string {
		return fmt.Sprintf("add the output of 'kubectl get %s -n %s -o yaml'", r.GroupResource(), st.Namespace)
	}
	var out []string
	whole := func(r longhorn.Resource, n int) bool {
		if n > 0 {
			return true
		}
		out = append(out, fmt.Sprintf("volumes were given but no %s objects: %s", r.Kind, get(r)))
		return false
	}
	perVolume := func(r longhorn.Resource, has map[string]bool) {
		var missing []string
		for i := range st.Volumes {
			if !has[st.Volumes[i].Name] {
				missing = append(missing, st.Volumes[i].Name)
			}
		}
		switch {
		case len(missing) == 1:
			out = append(out, fmt.Sprintf("volume %s has no %s object in the files: %s", missing[0], r.Kind, get(r)))
		case len(missing) > 1:
			out = append(out, fmt.Sprintf("%d volumes (%s, ...) have no %s object in the files: %s", len(missing), missing[0], r.Kind, get(r)))
		}
	}
	if whole(longhorn.Engines, len(st.Engines)) {
		has := map[string]bool{}
		for i := range st.Engines {
			has[longhorn.VolumeOf(&st.Engines[i])] = true
		}
		perVolume(longhorn.Engines, has)
	}
	if whole(longhorn.Replicas, len(st.Replicas)) {
		has := map[string]bool{}
		for i := range st.Replicas {
			has[longhorn.VolumeOf(&st.Replicas[i])] = true
		}
		perVolume(longhorn.Replicas, has)
	}
	if st.Version.Known() && st.Version.HasVolumeAttachments() {
		whole(longhorn.VolumeAttachments, len(st.VolumeAttachments))
	}
	if m := missingFrontends(st); m != "" {
		out = append(out, m+": "+get(longhorn.EngineFrontends))
	}
	return out
}

// missingFrontends says what is missing when the state has v2 volumes on
// Longhorn 1.12+ (or an unknown release) and no EngineFrontend of one of
// them: 1.12.0's volume controller creates one for every v2 volume it
// reconciles (reconcileVolumeCreation), and the verdict on two active
// engines of a v2 volume rests on it, so a check without them is
// incomplete. "" when nothing is missing: no v2 volume, a release before
// 1.12 (no such kind), or a frontend for every v2 volume.
func missingFrontends(st *longhorn.State) string {
	if st.Version.Known() && !st.Version.HasEngineFrontends() {
		return ""
	}
	has := map[string]bool{}
	for i := range st.EngineFrontends {
		has[longhorn.VolumeOf(&st.EngineFrontends[i])] = true
	}
	var missing []string
	for i := range st.Volumes {
		v := &st.Volumes[i]
		if v.DataEngineName() == longhorn.DataEngineV2 && !has[v.Name] {
			missing = append(missing, v.Name)
		}
	}
	switch len(missing) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("v2 volume %s has no %s object", missing[0], longhorn.EngineFrontends.Kind)
	}
	return fmt.Sprintf("%d v2 volumes (%s, ...) have no %s object", len(missing), missing[0], longhorn.EngineFrontends.Kind)
}
