package detect

import (
	"fmt"
	"sort"
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// flipChanges makes the flags what Longhorn's own confirm would have left:
// the survivor's replicas active, every other engine's replicas inactive.
//
// While two engines are active every sync stops at the BUG error, so the
// writes are inert until the stale engine is deactivated, and fix makes
// them all before that. But a run may stop between two of them, and an
// operator may then delete the stale engine by hand (the KB step): Longhorn
// then cleans up at once. The order is chosen so that every prefix survives
// that, directory by directory (a migration clone shares its original's
// data directory):
//   - before 1.5.3 deleting an inactive replica never wipes its directory,
//     so within a directory the stale replica is deactivated before the
//     survivor's clone is activated: no directory ever has two active
//     Replica CRs, of which cleanupExtraHealthyReplicas could delete one
//     (data locality, replica auto-balance, an eviction) and wipe the
//     directory the other uses;
//   - from 1.5.3 deleting an inactive replica that is the last user of its
//     directory wipes it, so a directory must never have only inactive
//     users: the clone is activated first. The directory then has two
//     active users for one write, which is safe only while no Longhorn path
//     deletes extra healthy replicas (checkNoExtraCleanup).
//
// Directories are handled one at a time, stale-only directories first and
// survivor-only ones last, so the count of active replicas never rises
// above what it was by more than the one pair being switched.
func flipChanges(ver longhorn.Version, keep string, replicas []*longhorn.Replica) []ReplicaChange {
	type dir struct {
		first   string
		on, off []ReplicaChange
	}
	dirs := map[string]*dir{}
	var order []*dir
	// A directory gets at most one active replica of the survivor: a
	// second active Replica CR on it is one that cleanupExtraHealthyReplicas
	// may delete, wiping the directory both use (explorer, seed 31 state 75
	// on 1.4.3: two replicas of the survivor on one directory, one
	// inactive; activating it lost the data to replica auto-balance).
	served := servedDirs(keep, replicas)
	for _, r := range sortedReplicas(replicas) {
		var c ReplicaChange
		switch {
		case r.Spec.EngineName == keep && !r.Spec.Active && served[dirKey(r)]:
			continue
		case r.Spec.EngineName == keep && !r.Spec.Active:
			served[dirKey(r)] = true
			c = ReplicaChange{Replica: r.Name, FromEngine: keep, ToEngine: keep, ToActive: true}
		case r.Spec.EngineName != keep && r.Spec.Active:
			c = ReplicaChange{Replica: r.Name, FromEngine: r.Spec.EngineName, ToEngine: r.Spec.EngineName, FromActive: true}
		default:
			continue
		}
		k := dirKey(r)
		d := dirs[k]
		if d == nil {
			d = &dir{first: r.Name}
			dirs[k] = d
			order = append(order, d)
		}
		if c.ToActive {
			d.on = append(d.on, c)
		} else {
			d.off = append(d.off, c)
		}
	}
	rank := func(d *dir) int {
		switch {
		case len(d.on) == 0:
			return 0
		case len(d.off) == 0:
			return 2
		}
		return 1
	}
	sort.SliceStable(order, func(i, j int) bool { return rank(order[i]) < rank(order[j]) })
	activateFirst := inactiveDeleteWipes(ver)
	var out []ReplicaChange
	for _, d := range order {
		if activateFirst {
			out = append(append(out, d.on...), d.off...)
		} else {
			out = append(append(out, d.off...), d.on...)
		}
	}
	return out
}

// replicaWrites is a repair's replica writes for keeping keep: first
// each inactive twin of keep handed to the stale engine to, then the
// flags (flipChanges). A twin is a replica of keep left inactive on a data
// directory that keep serves once the flags are set. Longhorn's finish of
// the confirm sets active every replica of the engine it keeps (from 1.5.3
// every healthy one), so a twin left on keep became a second active
// Replica CR on that directory, the SharedReplicaDirectory state (explorer:
// seed 37 state 18 on 1.5.3, seed 45 state 149 on 1.4.3, after fix exited
// 0). Handed over (spec.engineName only, still inactive) it is like the
// stale engine's other clones, removed by Longhorn's clean-up with its
// directory kept, which keep's active replica uses; those writes change no
// replica's spec.active, so they go first. note says so for the plan's
// reason ("" without twins).
func replicaWrites(ver longhorn.Version, keep, to string, replicas []*longhorn.Replica) (writes []ReplicaChange, note string) {
	flips := flipChanges(ver, keep, replicas)
	if to == "" {
		return flips, ""
	}
	activated := map[string]bool{}
	for _, c := range flips {
		if c.ToActive {
			activated[c.Replica] = true
		}
	}
	served := map[string]bool{}
	for _, r := range replicas {
		if r.Spec.EngineName == keep && r.DeletionTimestamp == nil && (r.Spec.Active || activated[r.Name]) {
			served[dirKey(r)] = true
		}
	}
	var names []string
	for _, r := range sortedReplicas(replicas) {
		if r.Spec.EngineName == keep && !r.Spec.Active && r.DeletionTimestamp == nil && !activated[r.Name] && served[dirKey(r)] {
			writes = append(writes, ReplicaChange{Replica: r.Name, FromEngine: keep, ToEngine: to})
			names = append(names, r.Name)
		}
	}
	if len(names) == 0 {
		return flips, ""
	}
	note = fmt.Sprintf("%s's inactive twin replicas (%s) go to %s first, so that Longhorn's finish does not set them active beside its active replica on one data directory",
		keep, strings.Join(names, ", "), to)
	return append(writes, flips...), note
}

// inactiveDeleteWipes: from 1.5.3 (and 1.6.0) Longhorn's replica controller
// also wipes the directory of a deleted inactive replica when no other
// Replica CR uses it. An unknown version is treated as the newer rule.
func inactiveDeleteWipes(ver longhorn.Version) bool {
	return !ver.Known() || ver.AtLeast(1, 5, 3)
}

// dirKey is where a replica's data lives; a replica not yet placed gets a
// key of its own.
func dirKey(r *longhorn.Replica) string {
	if r.Spec.DataDirectoryName == "" {
		return "replica/" + r.Name
	}
	return r.Spec.NodeID + "\x00" + r.Spec.DiskID + "\x00" + r.Spec.DiskPath + "\x00" + r.Spec.DataDirectoryName
}

// sharesDirWithSwitch: the flip switches a directory from one replica to
// another (a clone activated beside its original deactivated).
func sharesDirWithSwitch(changes []ReplicaChange, replicas []*longhorn.Replica) bool {
	byName := map[string]*longhorn.Replica{}
	for _, r := range replicas {
		byName[r.Name] = r
	}
	on, off := map[string]bool{}, map[string]bool{}
	for _, c := range changes {
		r := byName[c.Replica]
		if r == nil {
			continue
		}
		if c.ToActive {
			on[dirKey(r)] = true
		} else {
			off[dirKey(r)] = true
		}
	}
	for k := range on {
		if off[k] {
			return true
		}
	}
	return false
}

// checkNoExtraCleanup: when the flip activates a clone before it
// deactivates the original on the same directory (1.5.3+), a stop between
// the two leaves two active Replica CRs there. Once the stale engine is gone
// Longhorn's cleanupExtraHealthyReplicas deletes one of them if the volume
// has data locality, replica auto-balance or an eviction requested, and
// deleting an active replica wipes the directory both use.
//
// On every release, a healthy inactive replica of the survivor on a
// directory where the survivor has an active one is set active again by
// Longhorn's own confirm once the stale engine is inactive
// (switchActiveReplicas: every replica of the current engine with
// healthyAt), unless the leftover clean-up removes it first: the same two
// active replicas on one directory (explorer, seed 31 state 75 on 1.4.3,
// which lost the data in one run of several).
func (cs *checks) noExtraCleanup(st *longhorn.State, v *longhorn.Volume, replicas []*longhorn.Replica, keep string) {
	var twin, beside string
	if keep != "" {
		twin, beside = inactiveTwin(replicas, keep)
	}
	switch {
	case !st.Version.Known() || keep == "":
		// Not a pass: with no writes to judge, the check was not made (the
		// version or survivor check has already refused the repair).
		cs.add(CheckNoExtraCleanup, true, "", NotCheckedPrefix+"no release or survivor to plan the writes for")
		(*cs)[len(*cs)-1].NotChecked = true
		return
	case twin != "":
	case !inactiveDeleteWipes(st.Version):
		cs.add(CheckNoExtraCleanup, true, "", "not needed on "+st.Version.String()+": within a data directory the stale replica is deactivated first, so no directory has two active replicas")
		return
	case !sharesDirWithSwitch(flipChanges(st.Version, keep, replicas), replicas):
		cs.add(CheckNoExtraCleanup, true, "", "not needed: no data directory changes hands between replicas")
		return
	}
	rab, src := v.Spec.ReplicaAutoBalance, "spec.replicaAutoBalance"
	if rab == "" || rab == "ignored" {
		rab, src = st.ReplicaAutoBalance, "setting "+longhorn.ReplicaAutoBalanceSetting
	}
	evicting := ""
	for _, r := range sortedReplicas(replicas) {
		if r.Status.EvictionRequested {
			evicting = r.Name
			break
		}
	}
	dl := v.Spec.DataLocality
	detail := fmt.Sprintf("spec.dataLocality=%q, replica auto-balance %q (%s), eviction requested: %s", dl, rab, src, orNone(evicting))
	var failure string
	switch {
	case dl != "" && dl != "disabled":
		failure = fmt.Sprintf("data locality is %s", dl)
	case rab == longhorn.SettingUnreadable:
		failure = "the replica-auto-balance setting could not be read"
	case rab != "" && rab != "disabled":
		failure = fmt.Sprintf("replica auto-balance is %s (%s)", rab, src)
	case evicting != "":
		failure = fmt.Sprintf("an eviction is requested for replica %s", evicting)
	}
	switch {
	case failure != "" && twin != "":
		failure += fmt.Sprintf(": replica %s of the survivor is inactive and healthy on the data directory its active replica %s uses; once the stale engine is inactive Longhorn's confirm sets it active again, and then deletes one of the two active replicas sharing that directory and wipes it; disable it for the repair (docs/troubleshooting-two-active-engines.md)", twin, beside)
	case failure != "":
		failure += ": if a repair stopped between two replica writes and the stale engine were then deleted, Longhorn would delete one of two active replicas sharing a data directory and wipe it; disable it for the repair (docs/troubleshooting-two-active-engines.md)"
	}
	if twin != "" {
		detail += fmt.Sprintf("; %s inactive beside active %s on one data directory", twin, beside)
	}
	cs.add(CheckNoExtraCleanup, failure == "", failure, detail)
}

// inactiveTwin names a healthy inactive replica of keep on a data
// directory where keep has an active replica, and that active replica.
func inactiveTwin(replicas []*longhorn.Replica, keep string) (twin, beside string) {
	active := map[string]string{}
	for _, r := range sortedReplicas(replicas) {
		if r.Spec.EngineName == keep && r.Spec.Active && r.DeletionTimestamp == nil && active[dirKey(r)] == "" {
			active[dirKey(r)] = r.Name
		}
	}
	for _, r := range sortedReplicas(replicas) {
		if r.Spec.EngineName == keep && !r.Spec.Active && r.Spec.HealthyAt != "" && r.DeletionTimestamp == nil && active[dirKey(r)] != "" {
			return r.Name, active[dirKey(r)]
		}
	}
	return "", ""
}

// repairBlocked says why fix does not act on this volume on this release
// ("" when it may): notRepairedOn, and v2 volumes on the affected 1.5.0 and
// 1.5.1, where deleting a v2 replica drops its logical volume whatever its
// spec.active, so no flag order protects the survivor's data.
func repairBlocked(ver longhorn.Version, v *longhorn.Volume) string {
	if v.DataEngineName() == longhorn.DataEngineV2 && ver.Known() && !ver.Class().Fixed() {
		return "this is a v2 volume on Longhorn " + ver.String() + ", where deleting any v2 replica drops its logical volume whatever its spec.active: no automatic fix (tested on the simulator only: " + ver.String() + " cannot be run here); recover by hand, see docs/troubleshooting-two-active-engines.md"
	}
	return notRepairedOn(ver, v)
}
