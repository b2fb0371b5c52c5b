package fixwatch

import (
	"fmt"
	"sort"
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// describe renders the fields of an object that matter to the guard as
// key=value pairs, for the event lines. Two versions of an object with the
// same description differ in nothing the guard reports, and their update
// is not logged (it still triggers a classification).
func describe(r longhorn.Resource, obj any) string {
	var kv []string
	add := func(k, v string) { kv = append(kv, k+"="+dash(v)) }
	ok := true
	switch r {
	case longhorn.Volumes:
		ok = decoded(obj, func(v *longhorn.Volume) {
			add("state", v.Status.State)
			add("node", v.Spec.NodeID)
			add("currentNode", v.Status.CurrentNodeID)
			add("migrationNode", v.Spec.MigrationNodeID)
			if v.Status.CurrentMigrationNodeID != "" {
				add("currentMigrationNode", v.Status.CurrentMigrationNodeID)
			}
			add("robustness", v.Status.Robustness)
		})
	case longhorn.Engines:
		ok = decoded(obj, func(e *longhorn.Engine) {
			add("volume", volumeOf(r, obj))
			add("node", e.Spec.NodeID)
			add("active", fmt.Sprint(e.Spec.Active))
			add("state", e.Status.CurrentState)
		})
	case longhorn.Replicas:
		ok = decoded(obj, func(x *longhorn.Replica) {
			add("volume", volumeOf(r, obj))
			add("engine", x.Spec.EngineName)
			add("node", x.Spec.NodeID)
			add("active", fmt.Sprint(x.Spec.Active))
			add("state", x.Status.CurrentState)
		})
	case longhorn.EngineFrontends:
		ok = decoded(obj, func(f *longhorn.EngineFrontend) {
			add("volume", volumeOf(r, obj))
			add("node", f.Spec.NodeID)
			add("engine", f.Spec.EngineName)
			add("active", fmt.Sprint(f.Spec.Active))
			add("state", f.Status.CurrentState)
		})
	case longhorn.VolumeAttachments:
		ok = decoded(obj, func(va *longhorn.VolumeAttachment) {
			var ts []string
			for _, id := range longhorn.SortedKeys(va.Spec.AttachmentTickets) {
				t := va.Spec.AttachmentTickets[id]
				s := "pending"
				if va.Satisfied(id) {
					s = "satisfied"
				}
				ts = append(ts, fmt.Sprintf("%s@%s(%s)", dash(t.Type), dash(t.NodeID), s))
			}
			sort.Strings(ts)
			add("volume", volumeOf(r, obj))
			add("tickets", strings.Join(ts, ","))
		})
	case longhorn.Settings:
		ok = decoded(obj, func(s *longhorn.Setting) {
			add("value", s.Value)
		})
	}
	if !ok {
		return "(undecodable)"
	}
	if m := objectMeta(obj); m != nil && m.GetDeletionTimestamp() != nil {
		kv = append(kv, "deleting=true")
	}
	return strings.Join(kv, " ")
}

// decoded calls f with obj as a T, and says whether obj decoded.
func decoded[T any](obj any, f func(*T)) bool {
	t, err := cached[T](obj)
	if err != nil {
		return false
	}
	f(t)
	return true
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// classKey identifies a classification for "did it change" purposes.
func classKey(f *detect.Finding, sig signature) string {
	if f == nil {
		return "healthy"
	}
	return fmt.Sprintf("%s|%s|%s|%s|%s|%t|%v", f.Type, f.Severity, f.Keep, strings.Join(f.Stale, ","), f.Action, f.Refused(), sig)
}
