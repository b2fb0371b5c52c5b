package detect

import (
	"fmt"
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/docs"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// newestProven is the newest release whose own controllers converged after
// fix with nothing lost (internal/realtest on v1.12.0; 1.11 lies between two
// proven lines and runs on the simulator only, its controllers do not build
// from the Go module proxy): its minor line is repaired, later ones are
// reported only. Lift it only with such a run.
var newestProven = longhorn.Version{Major: 1, Minor: 12}

// The Longhorn release → action table of fix, in one place: what fix does to
// the stale engines of a v1 volume stuck with two active engines, once every
// precondition holds and the replica flags are set right. fix, scan,
// preflight and the guard ask here; docs/troubleshooting-two-active-engines.md
// explains each row.
//
//	1.3, 1.4.0–1.4.3           deactivate
//	1.5.0, 1.5.1               delete while status.currentMigrationNodeID is
//	                           the current node (the stuck confirm's own
//	                           state), deactivate otherwise
//	1.4.4+, 1.5.2–1.12         deactivate (stuck before the upgrade)
//	1.13+, before 1.3, v2      no automatic fix
//	unknown                    none (the first precondition fails)

// ReleaseRepair is the engine action fix takes on release v for a v1 volume
// stuck with two active engines when every check passes (after setting the
// replica flags). On 1.5.0/1.5.1 it is delete for the stuck confirm's own
// state (status.currentMigrationNodeID still the current node), deactivate
// otherwise.
func ReleaseRepair(v longhorn.Version) Action {
	if !v.Known() || notRepairedOn(v, &longhorn.Volume{}) != "" {
		return ActionNone
	}
	if v.Class() == longhorn.ClassL15a {
		return ActionDelete
	}
	return ActionDeactivate
}

// EngineActions are every engine action fix may take on release v: none
// where it does not repair, deactivate, and on 1.5.0/1.5.1 delete too.
func EngineActions(v longhorn.Version) []Action {
	switch ReleaseRepair(v) {
	case ActionDelete:
		return []Action{ActionDeactivate, ActionDelete}
	case ActionDeactivate:
		return []Action{ActionDeactivate}
	}
	return nil
}

// engineAction is the row of the table for volume v on release ver, once
// notRepairedOn has let it through: delete on 1.5.0/1.5.1 while
// status.currentMigrationNodeID is still the current node, so that Longhorn
// re-enters the confirm once the engine is gone; deactivate otherwise.
func engineAction(ver longhorn.Version, v *longhorn.Volume) Action {
	cm := v.Status.CurrentMigrationNodeID
	if ver.Class() == longhorn.ClassL15a && cm != "" && cm == v.Status.CurrentNodeID {
		return ActionDelete
	}
	return ActionDeactivate
}

// notRepairedOn says why fix does not act on this release ("" when it does).
// Fixed releases still refuse two active engines, so a volume stuck before
// an upgrade stays stuck; the repair is the same there, up to the newest
// release whose controller was run after it.
func notRepairedOn(ver longhorn.Version, v *longhorn.Volume) string {
	switch cls := ver.Class(); {
	case cls == longhorn.ClassL13, cls == longhorn.ClassL14a, cls == longhorn.ClassL15a, cls == longhorn.ClassUnknown:
		// an unknown version fails the first precondition instead
		return ""
	case !cls.Fixed():
		return "Longhorn version " + ver.String() + " is not one this tool repairs: no automatic fix"
	case v.DataEngineName() != longhorn.DataEngineV1:
		return "this is a " + v.DataEngineName() + " volume on Longhorn " + ver.String() + ", whose confirm repoints replicas instead of switching their flags: no automatic fix, report it to Longhorn with this evidence"
	case ver.AfterLine(newestProven):
		return fmt.Sprintf("the repair has not been proven on Longhorn %s (newest release proven: %d.%d): no automatic fix, report it with this evidence (see %s)",
			ver, newestProven.Major, newestProven.Minor, docs.Troubleshooting)
	}
	return ""
}

// RepairRow is one row of the release → action table, for help texts.
type RepairRow struct {
	Releases string
	Action   string
}

// RepairTable is the table above as fix's help prints it. Each row's action
// is asked of ReleaseRepair on a release the row names, so the help cannot
// drift from what fix does.
func RepairTable() []RepairRow {
	say := func(v longhorn.Version, what map[Action]string) string {
		return what[ReleaseRepair(v)]
	}
	deactivate := map[Action]string{ActionDeactivate: "deactivate the stale engine (spec.active=false)"}
	newest := fmt.Sprintf("1.%d", newestProven.Minor)
	return []RepairRow{
		{"1.3, 1.4.0-1.4.3", say(longhorn.MustParseVersion("v1.4.3"), deactivate) + "; deleting it\nthere can leave the replicas inverted and lose data"},
		{"1.5.0, 1.5.1", say(longhorn.MustParseVersion("v1.5.1"), map[Action]string{ActionDelete: "delete the stale engine (Longhorn's documented workaround)\nwhile status.currentMigrationNodeID is the current node,\ndeactivate it otherwise"})},
		{"1.4.4+, 1.5.2-" + newest, say(longhorn.Version{Major: 1, Minor: newestProven.Minor}, deactivate) + ":\nfixed releases still refuse two active engines, so a\nvolume stuck before the upgrade stays stuck"},
		{fmt.Sprintf("1.%d+, before 1.3", newestProven.Minor+1), say(longhorn.Version{Major: 1, Minor: newestProven.Minor + 1}, map[Action]string{ActionNone: "no action: reported, not repaired (not proven there)"})},
		{"unknown, v2 volumes", say(longhorn.Version{}, map[Action]string{ActionNone: "no action: reported, not repaired"})},
	}
}

// RepairTableText is RepairTable laid out for a help text, indented by two.
func RepairTableText() string {
	rows := RepairTable()
	w := 0
	for _, r := range rows {
		w = max(w, len(r.Releases))
	}
	var b strings.Builder
	for _, r := range rows {
		for i, line := range strings.Split(r.Action, "\n") {
			label := r.Releases
			if i > 0 {
				label = ""
			}
			fmt.Fprintf(&b, "  %-*s  %s\n", w, label, line)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}
