package preflight

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/docs"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// input is everything one assessment looks at.
type input struct {
	State  *longhorn.State
	Result detect.Result
	Source string
	// Target is --to; nil without it.
	Target *longhorn.Version
	// Window is the --for of the recommended guard.
	Window time.Duration
	// Unchecked names checks that could not run (e.g. instance managers
	// not readable).
	Unchecked []string
}

// assess builds the report. It is pure: the same state gives the same report.
func assess(in input) *Report {
	st := in.State
	r := &Report{
		ReportMeta: cmdutil.NewReportMeta(ReportKind),
		Namespace:  st.Namespace, Source: in.Source,
		Release: assessRelease(st.Version),
		Nodes:   []NodeVolumes{}, Blockers: []Blocker{}, Unchecked: append([]string{}, in.Unchecked...),
	}
	if !st.Version.Known() {
		r.Unchecked = append(r.Unchecked, "the Longhorn release ("+st.VersionSource+")")
	}
	if in.Target != nil {
		r.Target = assessTarget(st.Version, *in.Target)
	}
	findings := map[string]*detect.Finding{}
	for i := range in.Result.Findings {
		f := &in.Result.Findings[i]
		if _, ok := findings[f.Volume]; !ok {
			findings[f.Volume] = f
		}
	}
	r.Summary.Volumes = len(st.Volumes)
	byNode := map[string][]MigratingVolume{}
	nodeOf := map[string]string{}
	for i := range st.Volumes {
		v := &st.Volumes[i]
		nodeOf[v.Name] = v.Status.CurrentNodeID
		if v.Status.State != longhorn.VolumeStateAttached {
			continue
		}
		r.Summary.Attached++
		if !v.Migratable() {
			continue
		}
		mv := migratingVolume(v)
		if f := findings[v.Name]; f != nil {
			mv.Finding = &FindingRef{Type: f.Type, Severity: f.Severity, Action: f.Action}
			r.Summary.InFinding++
		}
		r.Summary.Migrating++
		node := v.Status.CurrentNodeID
		if node == "" {
			node = "<none>"
		}
		byNode[node] = append(byNode[node], mv)
	}
	nodes := make([]string, 0, len(byNode))
	for n := range byNode {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	for _, n := range nodes {
		vs := byNode[n]
		sort.Slice(vs, func(i, j int) bool { return vs[i].Name < vs[j].Name })
		r.Nodes = append(r.Nodes, NodeVolumes{Node: n, Volumes: vs})
	}
	for i := range in.Result.Findings {
		if b, ok := blockerFor(st, &in.Result.Findings[i]); ok {
			if b.Node == "" {
				b.Node = nodeOf[b.Volume]
			}
			r.Blockers = append(r.Blockers, b)
		}
	}
	r.Summary.Blockers = len(r.Blockers)
	r.Drain = detect.DrainView(st, in.Result, "") // drain.go
	r.Unchecked = append(r.Unchecked, pdbUnchecked(st)...)
	affectedOnTheWay := st.Version.Affected() || (r.Target != nil && r.Target.Affected)
	if exposed := affectedOnTheWay && r.Summary.Migrating > 0; exposed || r.Summary.Migrating == 0 || st.Version.Known() {
		r.Summary.Exposed = &exposed
	}
	switch {
	case len(r.Unchecked) > 0:
		r.Verdict = VerdictUnchecked
	case len(r.Blockers) > 0:
		r.Verdict = VerdictAttention
	default:
		r.Verdict = VerdictReady
	}
	r.Recommendation = recommend(st, r, in.Target, in.Window)
	return r
}

func migratingVolume(v *longhorn.Volume) MigratingVolume {
	mv := MigratingVolume{Name: v.Name, DataEngine: v.DataEngineName(), Robustness: v.Status.Robustness, Workloads: []Workload{}}
	ks := v.Status.KubernetesStatus
	if ks.PVCName != "" {
		mv.PVC = ks.PVCName
		if ks.Namespace != "" {
			mv.PVC = ks.Namespace + "/" + ks.PVCName
		}
	}
	for _, w := range ks.WorkloadsStatus {
		switch {
		case w.WorkloadName != "" && w.WorkloadType != "":
			mv.Workloads = append(mv.Workloads, Workload{Kind: w.WorkloadType, Name: w.WorkloadName, Namespace: ks.Namespace, Pod: w.PodName})
		case w.PodName != "":
			mv.Workloads = append(mv.Workloads, Workload{Kind: "Pod", Name: w.PodName, Namespace: ks.Namespace, Pod: w.PodName})
		}
	}
	return mv
}

const cmdPrefix = "kubectl longhorn-engines "

// nsFlag is " -n NS" unless the namespace is the default one, so that a
// printed command runs as it is.
func nsFlag(ns string) string {
	if ns == "" || ns == longhorn.DefaultNamespace {
		return ""
	}
	return " -n " + ns
}

// blockerFor decides whether a finding blocks a drain today and what
// resolves it: two active engines, a migration in flight or finishing, a
// cleanup that lasts, orphan engine processes, and every other finding that
// needs attention.
func blockerFor(st *longhorn.State, f *detect.Finding) (Blocker, bool) {
	ns := nsFlag(st.Namespace)
	b := Blocker{Volume: f.Volume, Type: f.Type, Severity: f.Severity}
	inspect := cmdPrefix + "scan " + f.Volume + " -o wide" + ns
	if f.Family != nil && f.Severity.NeedsAttention() {
		familyBlocker(&b, f, ns) // family.go
		return b, true
	}
	if (f.Type == detect.TypeMigrationInFlight || f.Type == detect.TypeMigrationFinishing) && f.Severity.NeedsAttention() {
		// Longhorn will not finish it by itself, or a rollback is unsafe:
		// scan's reason says what to do, not the usual commands.
		b.Problem = "a live migration Longhorn does not finish by itself"
		b.Command = inspect
		b.Resolve = f.Reason
		return b, true
	}
	switch f.Type {
	case detect.TypeMultipleActiveEngines:
		b.Problem = "two active engines: the volume cannot detach or migrate, the drain hangs"
		if f.Action == detect.ActionDeactivate || f.Action == detect.ActionDelete {
			b.Command = cmdPrefix + "fix " + f.Volume + ns
			b.Resolve = fmt.Sprintf("fix %ss %s and keeps %s (see '%s')", f.Action, strings.Join(f.Stale, ", "), f.Keep, inspect)
		} else {
			b.Command = inspect
			b.Resolve = "no safe automatic repair: " + f.Reason + " (" + docs.Troubleshooting + ")"
		}
	case detect.TypeSharedReplicaDirectory:
		b.Problem = "two active replicas on one data directory: a drain that evicts or removes either one wipes the other's data"
		if f.Action == detect.ActionSetReplicas {
			b.Command = cmdPrefix + "fix " + f.Volume + ns
			b.Resolve = fmt.Sprintf("fix sets spec.active=false on %s, and Longhorn removes it and keeps the directory (see '%s')", strings.Join(f.ChangedReplicas(), ", "), inspect)
		} else {
			b.Command = inspect
			b.Resolve = f.Reason
		}
	case detect.TypeMigrationInFlight:
		b.Problem = "a live migration is in flight: a drain must not start another one"
		if f.Evidence.DataEngine == longhorn.DataEngineV2 && f.Evidence.MigrationNodeID == "" {
			b.Command = inspect
			b.Resolve = "a v2 engine switchover is in progress: wait for Longhorn to finish it, then run preflight again"
			break
		}
		b.Command = cmdPrefix + "migrate rollback " + f.Volume + ns
		if st.Version.ReplicaDeleteIgnoresConflict() {
			b.Resolve = fmt.Sprintf("roll it back to %[4]s with the command above: on Longhorn %[5]s a confirm's clean-up can wipe the migrated replicas' data (%[6]s); '%[1]smigrate status %[2]s%[3]s' shows where it is",
				cmdPrefix, f.Volume, ns, orNone(f.Evidence.CurrentNodeID), st.Version, docs.ConfirmCleanup)
			break
		}
		b.Resolve = fmt.Sprintf("finish it on %[4]s with '%[1]smigrate confirm %[2]s%[3]s', or roll it back to %[5]s with the command above; '%[1]smigrate status %[2]s%[3]s' shows where it is",
			cmdPrefix, f.Volume, ns, orNone(f.Evidence.MigrationNodeID), orNone(f.Evidence.CurrentNodeID))
	case detect.TypeMigrationFinishing:
		b.Problem = "Longhorn is finishing a migration confirm or rollback"
		b.Command = cmdPrefix + "migrate status " + f.Volume + ns
		b.Resolve = "wait until it is done (the command shows the phase), then run preflight again; if it lasts, see '" + inspect + "'"
	case detect.TypePendingCleanup:
		if !f.Severity.NeedsAttention() {
			return Blocker{}, false // brief after every confirm
		}
		b.Problem = "an old engine waits for its finalizer for longer than the pending threshold"
		b.Command = inspect
		b.Resolve = f.Reason
	case detect.TypeOrphanEngineProcess:
		b.Problem = "an engine process with no Engine CR in an instance manager: draining its node can hang"
		b.Command = cmdPrefix + "scan -o wide" + ns
		b.Resolve = f.Reason + "; this tool does not remove processes"
		if st.Version.AtLeast(1, 9, 0) {
			b.Resolve += fmt.Sprintf(": Longhorn %s lists it as an orphan of type engine-instance ('kubectl -n %s get orphans.longhorn.io')", st.Version, st.Namespace)
		}
		b.Resolve += " (longhorn#6552)"
	case detect.TypeOrphanEngine:
		if !f.Severity.NeedsAttention() {
			return Blocker{}, false
		}
		b.Problem = "an Engine CR whose volume no longer exists"
		b.Command = cmdPrefix + "scan -o wide" + ns
		b.Resolve = f.Reason
	default:
		if !f.Severity.NeedsAttention() {
			return Blocker{}, false
		}
		b.Problem = string(f.Type)
		b.Command = inspect
		b.Resolve = f.Reason
	}
	return b, true
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// recommend says what to do before and during the upgrade window.
func recommend(st *longhorn.State, r *Report, target *longhorn.Version, window time.Duration) Recommendation {
	var rec Recommendation
	ns := nsFlag(st.Namespace)
	if len(r.Unchecked) > 0 {
		rec.Steps = append(rec.Steps, "make the missing checks possible ("+strings.Join(r.Unchecked, "; ")+") and run preflight again")
	}
	if len(r.Blockers) > 0 {
		rec.Steps = append(rec.Steps, fmt.Sprintf("resolve the %d blocker(s) above with the command given for each, then run preflight again", len(r.Blockers)))
	}
	var affected []longhorn.Version
	if st.Version.Affected() {
		affected = append(affected, st.Version)
	}
	if target != nil && target.Affected() && target.Class() != st.Version.Class() {
		affected = append(affected, *target)
	}
	switch {
	case len(affected) == 0 && !st.Version.Known():
	case len(affected) == 0:
		rec.Steps = append(rec.Steps, "no guard needed for longhorn#6642: the releases of this upgrade have the fix")
	case r.Summary.Migrating == 0:
		rec.Steps = append(rec.Steps, "no volume live-migrates during drains now, so longhorn#6642 cannot occur; if migratable volumes are attached before the upgrade, run preflight again")
	default:
		rec.GuardCommand = fmt.Sprintf("%sfix --watch --yes --for %s%s", cmdPrefix, formatWindow(window), ns)
		rec.Steps = append(rec.Steps, fmt.Sprintf("for the upgrade window run '%s' (or the Job in %s): it repairs a volume that falls into the two-active-engines state and stays there", rec.GuardCommand, docs.GuardJob))
		rec.GuardRBAC = guardRBAC(st.Namespace, affected)
	}
	if r.Summary.Migrating > 0 && (st.Version.ReplicaDeleteIgnoresConflict() || (target != nil && target.ReplicaDeleteIgnoresConflict())) {
		rec.Steps = append(rec.Steps, fmt.Sprintf("on Longhorn 1.12 each live migration's confirm can wipe the migrated replicas' data when Longhorn's write before its clean-up conflicts: stop the %d migratable workload(s) before draining their nodes where you can (%s)",
			r.Summary.Migrating, docs.ConfirmCleanup))
	}
	if target != nil && r.Target != nil && len(r.Target.Path) > 1 {
		rec.Steps = append(rec.Steps, "upgrade one minor release at a time: "+strings.Join(r.Target.Path, ", then "))
	}
	if len(rec.Steps) == 0 {
		rec.Steps = []string{"nothing to do"}
	}
	return rec
}

// guardRBAC is what `fix --watch` needs on these releases (docs/rbac.md).
func guardRBAC(ns string, affected []longhorn.Version) string {
	if ns == "" {
		ns = longhorn.DefaultNamespace
	}
	verbs := map[detect.Action]bool{}
	for _, v := range affected {
		verbs[repairOn(v)] = true
	}
	var w []string
	if verbs[detect.ActionDeactivate] {
		w = append(w, "patch")
	}
	if verbs[detect.ActionDelete] {
		w = append(w, "delete")
	}
	return fmt.Sprintf("in namespace %s: get and list on volumes, engines, replicas, settings, volumeattachments, instancemanagers; watch on volumes, engines, replicas, settings, volumeattachments; %s on engines and patch on replicas (Role longhorn-engines-guard in %s; %s)",
		ns, strings.Join(w, " and "), docs.GuardRBAC, docs.RBAC)
}

// formatWindow prints 6h0m0s as 6h and 1h30m0s as 1h30m.
func formatWindow(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
