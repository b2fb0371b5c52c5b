package guard

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// describe renders the fields of an object that matter to the guard as
// key=value pairs, for the event lines. Two versions of an object with the
// same description differ in nothing the guard reports, and their update
// is not logged (it still triggers a classification).
func describe(r longhorn.Resource, u *unstructured.Unstructured) string {
	var kv []string
	add := func(k, v string) { kv = append(kv, k+"="+dash(v)) }
	switch r {
	case longhorn.Volumes:
		var v longhorn.Volume
		if decode(u, &v) != nil {
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
		var e longhorn.Engine
		if decode(u, &e) != nil {
			return "(undecodable)"
		}
		add("volume", volumeOf(r, u))
		add("node", e.Spec.NodeID)
		add("active", fmt.Sprint(e.Spec.Active))
		add("state", e.Status.CurrentState)
	case longhorn.Replicas:
		var x longhorn.Replica
		if decode(u, &x) != nil {
			return "(undecodable)"
		}
		add("volume", volumeOf(r, u))
		add("engine", x.Spec.EngineName)
		add("node", x.Spec.NodeID)
		add("active", fmt.Sprint(x.Spec.Active))
		add("state", x.Status.CurrentState)
	case longhorn.VolumeAttachments:
		var va longhorn.VolumeAttachment
		if decode(u, &va) != nil {
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
		add("volume", volumeOf(r, u))
		add("tickets", strings.Join(ts, ","))
	case longhorn.Settings:
		var s longhorn.Setting
		if decode(u, &s) != nil {
			return "(undecodable)"
		}
		add("value", s.Value)
	}
	if u.GetDeletionTimestamp() != nil {
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
