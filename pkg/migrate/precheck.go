package migrate

import (
	"fmt"
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/docs"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// check is one pre-condition with the observed values that decided it.
type check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

type checks []check

func (cs *checks) add(name string, ok bool, format string, args ...any) {
	*cs = append(*cs, check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
}

// failed returns the checks that did not pass.
func (cs checks) failed() []check {
	var out []check
	for _, c := range cs {
		if !c.OK {
			out = append(out, c)
		}
	}
	return out
}

// refusal is a pre-check failure: nothing was written.
type refusal struct {
	what   string
	failed []check
}

func (r *refusal) Error() string {
	parts := make([]string, len(r.failed))
	for i, c := range r.failed {
		parts[i] = c.Name + " (" + c.Detail + ")"
	}
	return fmt.Sprintf("refusing to %s: %s", r.what, strings.Join(parts, "; "))
}

// versionCheck: the version decides the driver, so it must be known and
// serve v1beta2.
func versionCheck(cs *checks, v longhorn.Version) {
	switch v.Class() {
	case longhorn.ClassUnknown:
		cs.add("longhorn version known", false, "setting %s not found or not a version", longhorn.VersionSetting)
	case longhorn.ClassUnsupported:
		cs.add("longhorn version known", false, "%s is older than 1.3 (longhorn.io/v1beta2 not served)", v)
	default:
		cs.add("longhorn version known", true, "%s", v)
	}
}

// NewestProven is the newest minor line on whose own controllers
// migrate's start and confirm ended with nothing lost in every run
// (internal/realtest, also under load and with the controllers' writes
// answered 409). 1.12 is after it for a reason of its own:
// longhorn.Version.ReplicaDeleteIgnoresConflict.
var NewestProven = longhorn.Version{Major: 1, Minor: 11}

// provenCheck is the pre-check that refuses to start or confirm a
// migration on a release where that was not shown to keep the data;
// rollback stays open. An unknown version passes here: versionCheck
// refuses it.
func provenCheck(v longhorn.Version) check {
	const name = "release proven for migrations"
	switch {
	case v.ReplicaDeleteIgnoresConflict():
		return check{Name: name, Detail: fmt.Sprintf("Longhorn %s deletes a replica even when the write that stores it inactive conflicts, so a confirm's clean-up can delete the old engine's replicas while they are stored active and remove the data directories the migrated engine's replicas use (shown on 1.12.0's own controllers); a confirm by Harvester or the CSI driver is exposed the same way, so stop the workload rather than migrate it where you can; 'migrate rollback' and 'migrate status' work here (%s)",
			v, docs.ConfirmCleanup)}
	case v.Known() && v.AfterLine(NewestProven):
		return check{Name: name, Detail: fmt.Sprintf("Longhorn %s: a migration this tool starts or confirms has not been shown to keep the data there; it does so up to %d.%d.x; use 'migrate rollback' or 'migrate status' here (%s)",
			v, NewestProven.Major, NewestProven.Minor, docs.SupportMatrix)}
	}
	return check{Name: name, OK: true, Detail: fmt.Sprintf("%s (up to %d.%d.x)", v, NewestProven.Major, NewestProven.Minor)}
}

// targetChecks: node B exists in Longhorn, is Ready and schedulable, and is
// not where the volume already is.
func targetChecks(cs *checks, s *snapshot, node *longhorn.Node, to string) {
	cur := s.volume.Status.CurrentNodeID
	cs.add("target is another node", to != cur && to != s.volume.Spec.NodeID, "target %s, volume on %s", to, orNone(cur))
	if node == nil {
		cs.add("target node exists in Longhorn", false, "no %s %q", longhorn.Nodes.GroupResource(), to)
		return
	}
	cs.add("target node exists in Longhorn", true, "%s", node.Name)
	cs.add("target node Ready", node.Ready(), "Ready condition %s", conditionStatus(node.Status.Conditions, "Ready"))
	sched := node.Schedulable() && !node.Spec.EvictionRequested
	cs.add("target node schedulable", sched, "allowScheduling=%t, Schedulable condition %s, evictionRequested=%t",
		node.Spec.AllowScheduling, conditionStatus(node.Status.Conditions, "Schedulable"), node.Spec.EvictionRequested)
}

// startChecks are the conditions under which Longhorn's own attach path
// would start a migration (its attach checks and, on 1.5+, the
// VolumeAttachment's start conditions), plus the target node's.
func startChecks(s *snapshot, node *longhorn.Node, to string) checks {
	var cs checks
	v := &s.volume
	versionCheck(&cs, s.version)
	cs.add("volume migratable and rwx", v.Migratable(),
		"spec.migratable=%t spec.accessMode=%q", v.Spec.Migratable, v.Spec.AccessMode)
	if de := v.DataEngineName(); de == longhorn.DataEngineV1 {
		cs.add("v1 data engine", true, "data engine %s", de)
	} else {
		cs.add("v1 data engine", false, "data engine %s: v2 volumes move by engine switchover, which this tool does not drive", de)
	}
	attached := v.Status.State == longhorn.VolumeStateAttached && v.Spec.NodeID != "" && v.Status.CurrentNodeID == v.Spec.NodeID
	cs.add("attached", attached, "status.state=%q spec.nodeID=%q status.currentNodeID=%q", v.Status.State, v.Spec.NodeID, v.Status.CurrentNodeID)
	cs.add("healthy or degraded", v.RobustnessUsable(), "status.robustness=%q", v.Status.Robustness)

	other := ""
	if s.va != nil {
		for _, t := range s.va.CSITickets() {
			if t.NodeID != v.Spec.NodeID {
				other = t.NodeID
			}
		}
	}
	notMigrating := !v.Migrating() && other == ""
	detail := fmt.Sprintf("spec.migrationNodeID=%q", v.Spec.MigrationNodeID)
	if s.version.HasCurrentMigrationNodeID() {
		detail += fmt.Sprintf(" status.currentMigrationNodeID=%q", v.Status.CurrentMigrationNodeID)
	}
	if other != "" {
		detail += fmt.Sprintf(", a csi-attacher ticket for node %s already exists", other)
	}
	cs.add("not already migrating", notMigrating, "%s", detail)
	oneEngine(&cs, s)

	cs.add("no engine upgrade pending", !v.UpgradePending(), "image %q, current image %q", v.WantedImage(), v.Status.CurrentImage)
	special := []string{}
	if v.Spec.Standby || v.Status.IsStandby {
		special = append(special, "a DR (standby) volume")
	}
	if v.Status.RestoreRequired {
		special = append(special, "restore pending")
	}
	if v.Status.ExpansionRequired {
		special = append(special, "expansion pending")
	}
	cs.add("no restore, expansion or DR standby", len(special) == 0, "%s", orText(strings.Join(special, ", "), "none"))

	if s.version.HasVolumeAttachments() {
		ticketChecks(&cs, s)
	}
	targetChecks(&cs, s, node, to)
	return cs
}

// oneEngine: exactly one Engine CR, active and serving on the current node,
// none of its replicas rebuilding (Longhorn reverts a migration whose old
// replicas are WO).
func oneEngine(cs *checks, s *snapshot) {
	cur := s.volume.Status.CurrentNodeID
	if len(s.engines) != 1 {
		names := make([]string, len(s.engines))
		for i := range s.engines {
			names[i] = fmt.Sprintf("%s@%s", s.engines[i].Name, orNone(s.engines[i].Spec.NodeID))
		}
		cs.add("one running engine on the current node", false, "%d engine CRs: %s", len(s.engines), orText(strings.Join(names, ", "), "none"))
		return
	}
	e := &s.engines[0]
	ok := e.IsActive() && e.Spec.NodeID == cur && e.Status.CurrentState == longhorn.StateRunning && e.Status.Endpoint != "" && e.RWCount() > 0
	cs.add("one running engine on the current node", ok, "%s: node %q active=%t state=%q endpoint=%q RW replicas %d",
		e.Name, e.Spec.NodeID, e.Spec.Active, e.Status.CurrentState, e.Status.Endpoint, e.RWCount())
	var wo []string
	for _, r := range longhorn.SortedKeys(e.Status.ReplicaModeMap) {
		if e.Status.ReplicaModeMap[r] == longhorn.ModeWO {
			wo = append(wo, r)
		}
	}
	cs.add("no replica rebuilding", len(wo) == 0, "WO replicas: %s", orText(strings.Join(wo, ", "), "none"))
}

// ticketChecks (1.5+): the VolumeAttachment exists with exactly one
// csi-attacher ticket, for the current node, asking for the frontend the
// volume has; a second one is what starts the migration.
func ticketChecks(cs *checks, s *snapshot) {
	v := &s.volume
	if s.va == nil {
		cs.add("csi-attacher ticket on the current node", false, "volume has no %s", longhorn.VolumeAttachments.GroupResource())
		return
	}
	all := s.va.CSITickets()
	mine := s.csiTicketsOn(v.Spec.NodeID)
	switch {
	case len(mine) == 0:
		cs.add("csi-attacher ticket on the current node", false, "no csi-attacher ticket for %q (%d csi tickets): Longhorn starts migrations only for volumes Kubernetes attached", v.Spec.NodeID, len(all))
	case len(all) != 1:
		cs.add("csi-attacher ticket on the current node", false, "%d csi-attacher tickets, want exactly the one of %s", len(all), v.Spec.NodeID)
	default:
		want := fmt.Sprint(v.Spec.DisableFrontend)
		got := mine[0].Parameters["disableFrontend"]
		ok := got == "" || got == "any" || got == want
		cs.add("csi-attacher ticket on the current node", ok, "ticket %s, disableFrontend=%q (volume %s)", mine[0].ID, got, want)
	}
	if s.version.TicketLimits() {
		// Longhorn's validating webhook (1.7+) refuses a migratable
		// volume's VolumeAttachment with more than two tickets: on 1.7–1.10
		// of any type, so a snapshot, backup or rebuild ticket makes the
		// start fail; from 1.11 csi-attacher tickets only.
		var other []string
		for _, id := range longhorn.SortedKeys(s.va.Spec.AttachmentTickets) {
			if t := s.va.Spec.AttachmentTickets[id]; t.Type != longhorn.AttacherTypeCSI {
				other = append(other, fmt.Sprintf("%s (%s)", id, orText(t.Type, "no type")))
			}
		}
		n, counted := len(s.va.Spec.AttachmentTickets), "tickets of any type"
		if s.version.TicketLimitCountsCSIOnly() {
			n, counted = n-len(other), "csi-attacher tickets"
		}
		cs.add("attachment tickets within Longhorn's limit", n+1 <= 2,
			"%d counted ticket(s) now, %d with the target's; Longhorn %s refuses more than 2 %s on a migratable volume; other tickets: %s",
			n, n+1, s.version, counted, orText(strings.Join(other, ", "), "none"))
	}
}

// inFlightChecks are the pre-checks of confirm and rollback: a migration to
// a known node is in place and Longhorn is not already finishing one.
func inFlightChecks(s *snapshot, d driver) (checks, string) {
	var cs checks
	v := &s.volume
	versionCheck(&cs, s.version)
	to := migrationTarget(s)
	detail := fmt.Sprintf("spec.nodeID=%q spec.migrationNodeID=%q%s", v.Spec.NodeID, v.Spec.MigrationNodeID, cmnDetail(s))
	switch {
	case to != "" && d.pending(s, to):
		cs.add("migration in progress", true, "to %s: %s", to, detail)
	case v.Migrating():
		cs.add("migration in progress", false, "Longhorn is already finishing a confirm or rollback: %s", detail)
	default:
		cs.add("migration in progress", false, "no migration: %s", detail)
	}
	cs.add("attached", v.Status.State == longhorn.VolumeStateAttached && v.Spec.NodeID != "",
		"status.state=%q spec.nodeID=%q", v.Status.State, v.Spec.NodeID)
	return cs, to
}

func cmnDetail(s *snapshot) string {
	if !s.version.HasCurrentMigrationNodeID() {
		return ""
	}
	d := fmt.Sprintf(" status.currentMigrationNodeID=%q", s.volume.Status.CurrentMigrationNodeID)
	if s.va != nil {
		var nodes []string
		for _, t := range s.va.CSITickets() {
			nodes = append(nodes, t.NodeID)
		}
		d += fmt.Sprintf(", csi-attacher tickets for [%s]", strings.Join(nodes, " "))
	}
	return d
}

func conditionStatus(cs []longhorn.Condition, t string) string {
	for _, c := range cs {
		if c.Type == t {
			if c.Reason != "" {
				return c.Status + " (" + c.Reason + ")"
			}
			return c.Status
		}
	}
	return "absent"
}

func orNone(s string) string { return orText(s, "<none>") }

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}
