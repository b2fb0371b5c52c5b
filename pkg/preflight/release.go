package preflight

import (
	"fmt"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/docs"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// What each release class means comes from longhorn.Version (the release
// table of docs/support-matrix.md); nothing here lists releases again.

// repairOn is what `fix` does to a stuck volume on release v
// (docs/support-matrix.md, the fix column): detect decides.
func repairOn(v longhorn.Version) detect.Action { return detect.ReleaseRepair(v) }

func repairWords(v longhorn.Version) string {
	switch repairOn(v) {
	case detect.ActionDeactivate:
		return "fix deactivates the stale engine (spec.active=false)"
	case detect.ActionDelete:
		return "fix deletes the stale engine (the documented workaround)"
	}
	return "fix only reports (no automatic repair)"
}

func assessRelease(v longhorn.Version) Release {
	r := Release{Version: v.String(), Class: string(v.Class()), Affected: v.Affected(), Repair: repairOn(v)}
	switch c := v.Class(); {
	case c == longhorn.ClassUnknown:
		r.Note = "the Longhorn release is unknown (setting " + longhorn.VersionSetting + "): whether it is affected cannot be told"
	case c == longhorn.ClassUnsupported:
		r.Note = "Longhorn " + v.String() + " is older than 1.3, which this tool does not support (" + docs.SupportMatrix + ")"
	case r.Affected:
		r.Note = "affected by longhorn#6642: a live migration (every drain of a node with a migratable volume) can leave two active engines; " + repairWords(v)
	default:
		r.Note = "has the fix for longhorn#6642: a migration confirm no longer leaves two active engines"
	}
	r.Note += confirmCleanupNote(v)
	return r
}

// confirmCleanupNote warns, on a release whose confirm clean-up can wipe
// data under a conflict, that every live migration of a drain is exposed.
func confirmCleanupNote(v longhorn.Version) string {
	if !v.ReplicaDeleteIgnoresConflict() {
		return ""
	}
	return "; but on " + v.String() + " a migration confirm's clean-up can delete the old engine's replicas while they are stored active, and so remove the data directories the migrated engine's replicas use, when Longhorn's write before the delete conflicts (a busy API server): every live migration of a drain is exposed; stop migratable workloads before draining where you can (" + docs.ConfirmCleanup + ")"
}

// checkTarget refuses a target Longhorn cannot upgrade to from cur.
func checkTarget(cur, to longhorn.Version) error {
	switch {
	case to.Class() == longhorn.ClassUnsupported:
		return fmt.Errorf("--to %s: Longhorn releases before 1.3 are not supported ("+docs.SupportMatrix+")", to)
	case cur.Known() && !to.AtLeast(cur.Major, cur.Minor, cur.Patch):
		return fmt.Errorf("--to %s is older than the running Longhorn %s: Longhorn does not support downgrades", to, cur)
	}
	return nil
}

// targetWarnings says what about a valid --to an operator should know:
// the running release itself is no upgrade, and a release this plugin has
// no repair for is judged from the newest behaviour it knows.
func targetWarnings(cur, to longhorn.Version) []string {
	var out []string
	if cur.Known() && to.String() == cur.String() {
		out = append(out, fmt.Sprintf("--to %s is the running release: there is no upgrade to check; the report is for the running release", to))
	}
	if to.Major > 1 || (to.Class().Fixed() && detect.ReleaseRepair(to) == detect.ActionNone) {
		out = append(out, fmt.Sprintf("--to %s is not a release this plugin has been proven on (%s): what is said about it is a guess from the newest release it knows", to, docs.SupportMatrix))
	}
	return out
}

func assessTarget(cur, to longhorn.Version) *Target {
	t := &Target{Release: assessRelease(to), StuckStayStuck: true}
	t.Fixes = cur.Affected() && !to.Affected()
	switch {
	case to.Affected():
		t.Note = "affected too: migrations during and after the upgrade can still leave two active engines; " + repairWords(to)
	case t.Fixes:
		t.Note = "fixes longhorn#6642: once every longhorn-manager runs " + to.String() + ", migrations no longer leave two active engines; until then (the drains of the upgrade itself) the running release decides"
	default:
		t.Note = "has the fix for longhorn#6642, like the running release"
	}
	t.Note += confirmCleanupNote(to)
	t.StuckNote = "volumes stuck with two active engines before the upgrade stay stuck after it: every release refuses to sync such a volume, and on " +
		to.String() + " " + repairWords(to) + "; run 'kubectl longhorn-engines fix' on them before upgrading"
	t.Path = upgradePath(cur, to)
	return t
}

// upgradePath lists the minor releases between cur and to: Longhorn upgrades
// one minor release at a time (from 1.5 its manager refuses to skip one).
// Where a minor line has affected patch releases, the step names the first
// fixed one.
func upgradePath(cur, to longhorn.Version) []string {
	if !cur.Known() || cur.Major != to.Major || to.Minor-cur.Minor < 2 {
		return nil
	}
	var out []string
	for m := cur.Minor + 1; m < to.Minor; m++ {
		step := fmt.Sprintf("v%d.%d.x", cur.Major, m)
		if first, ok := firstFixedPatch(cur.Major, m); ok && first > 0 {
			step += fmt.Sprintf(": use v%d.%d.%d or later (earlier %d.%d releases are affected)", cur.Major, m, first, cur.Major, m)
		} else if !ok {
			step += ": every release of this line is affected"
		}
		out = append(out, step)
	}
	out = append(out, to.String())
	return out
}

// firstFixedPatch is the lowest patch of major.minor that longhorn.Version
// does not class as affected; ok is false when none up to a bound is.
func firstFixedPatch(major, minor int) (int, bool) {
	for p := 0; p < 100; p++ {
		if !(longhorn.Version{Major: major, Minor: minor, Patch: p}).Affected() {
			return p, true
		}
	}
	return 0, false
}
