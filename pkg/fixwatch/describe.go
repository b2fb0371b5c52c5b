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
	switch r {
	case longhorn.Volumes:
		v, err := cached[longhorn.Volume](obj)
		if err != nil {
			return "(undecodable)"
		}
		add("state", v.Status.State)
		add("node", v.Spec.NodeID)
		add("currentNode", v.Status.CurrentNodeID)
		add("migrationNode", v.Spec.MigrationNodeID)
		if v.Status.CurrentMigrationNodeID != "" {
			add("currentMigrationNode", v.Status.CurrentMigrationNodeID)
		}
		add("robustness", v.Status.Robustness)
	case longhorn.Engines:
		e, err := cached[longhorn.Engine](obj)
		if err != nil {
			return "(undecodable)"
		}
		add("volume", volumeOf(r, obj))
		add("node", e.Spec.NodeID)
		add("active", fmt.Sprint(e.Spec.Active))
		add("state", e.Status.CurrentState)
	case longhorn.Replicas:
		x, err := cached[longhorn.Replica](obj)
		if err != nil {
			return "(undecodable)"
		}
		add("volume", volumeOf(r, obj))
		add("engine", x.Spec.EngineName)
		add("node", x.Spec.NodeID)
		add("active", fmt.Sprint(x.Spec.Active))
		add("state", x.Status.CurrentState)
	case longhorn.VolumeAttachments:
		va, err := cached[longhorn.VolumeAttachment](obj)
		if err != nil {
			return "(undecodable)"
		}
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
	case longhorn.Settings:
		s, err := cached[longhorn.Setting](obj)
		if err != nil {
			return "(undecodable)"
		}
		add("value", s.Value)
	}
	if m := objectMeta(obj); m != nil && m.GetDeletionTimestamp() != nil {
		kv = append(kv, "deleting=true")
	}
	return strings.Join(kv, " ")
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
