package detect

import (
	"fmt"
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/docs"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// TypeMultipleActiveEngineFrontends: two or more EngineFrontends of a v2
// volume with spec.active and no deletionTimestamp (Longhorn 1.12+). Longhorn
// 1.12.0's datastore then fails with "BUG: found the second active engine
// frontend X besides Y" wherever it picks the volume's frontend
// (GetCurrentEngineFrontendAndExtras).
const TypeMultipleActiveEngineFrontends Type = "MultipleActiveEngineFrontends"

// V2Doc is the section of the troubleshooting page on v2 volumes of 1.12+.
const V2Doc = docs.Troubleshooting + "#v2-volumes-on-longhorn-112"

// v2Rows classifies the two-active states of a v2 volume on Longhorn 1.12+
// (or an unknown release, where the volume's frontends were read all the
// same): two active engines (the engine switchover's clean-up conflict,
// longhorn#13951) and two active engine frontends. ok is false for any
// other state, which the v1 rows then judge.
func v2Rows(st *longhorn.State, idx *index, v *longhorn.Volume, engines []*longhorn.Engine, active []*longhorn.Engine, f *Finding) bool {
	if v.DataEngineName() != longhorn.DataEngineV2 || (st.Version.Known() && !st.Version.V2Switchover()) {
		return false
	}
	efs := idx.efs[v.Name]
	var activeEFs []*longhorn.EngineFrontend
	for _, ef := range efs {
		if ef.IsActive() {
			activeEFs = append(activeEFs, ef)
		}
	}
	switch {
	case len(active) >= 2:
		v2ActiveEngines(st, v, engines, active, activeEFs, f)
	case len(activeEFs) >= 2:
		v2ActiveFrontends(st, v, engines, active, activeEFs, f)
	default:
		return false
	}
	return true
}

// v2EngineTarget is where Longhorn wants the engine of a v2 volume:
// spec.engineNodeID, else spec.nodeID (processEngineSwitchover's
// targetNodeID); v2EngineCurrent where it last saved it:
// status.currentEngineNodeID, else status.currentNodeID (the fields
// GetNewCurrentEngineAndExtras matches for a v2 volume).
func v2EngineTarget(v *longhorn.Volume) string {
	if v.Spec.EngineNodeID != "" {
		return v.Spec.EngineNodeID
	}
	return v.Spec.NodeID
}

func v2EngineCurrent(v *longhorn.Volume) string {
	if v.Status.CurrentEngineNodeID != "" {
		return v.Status.CurrentEngineNodeID
	}
	return v.Status.CurrentNodeID
}

// v2ActiveEngines: two active engines of a v2 volume. The engine to keep is
// the one the volume's active frontend sends I/O to (its status.targetIP
// and targetPort are that engine's address, and its spec.engineName names
// it), and it must be the one engine on the node Longhorn moves the engine
// to (spec.engineNodeID, else spec.nodeID). status.currentEngineNodeID does
// not decide: 1.12.0's switchover saves it in the same deferred write the
// failed update of the old engine stops, so in the state it leaves it still
// names the old engine's node (longhorn#13951).
func v2ActiveEngines(st *longhorn.State, v *longhorn.Volume, engines, active []*longhorn.Engine, activeEFs []*longhorn.EngineFrontend, f *Finding) {
	f.Type, f.Severity, f.Action = TypeMultipleActiveEngines, SeverityCritical, ActionNone
	target, cur := v2EngineTarget(v), v2EngineCurrent(v)
	bug := fmt.Sprintf("%d engines of this v2 volume have spec.active=true (%s); every sync of this volume fails with \"BUG: found the second active engine\"",
		len(active), strings.Join(engineNames(active), ", "))
	if st.Version.Known() && !st.Version.AtLeast(1, 12, 2) {
		bug += fmt.Sprintf(" (Longhorn %s's engine switchover marks the new engine active even when its update of the old one fails, longhorn#13951, fixed in 1.12.2)", st.Version.String())
	}

	survivor, why := v2Survivor(v, engines, active, activeEFs, target)
	var stale []string
	if survivor != nil {
		stale = namesExcept(active, survivor.Name)
		f.Keep, f.Stale = survivor.Name, stale
	}
	markRoles(f, f.Keep, f.Stale)
	f.Steps = v2EngineSteps(st.Namespace, v, survivor, stale, activeEFs)
	if survivor == nil {
		f.Reason = bug + "; which engine serves I/O is not clear: " + why + "; fix does not repair v2 volumes: change no engine, report the volume to Longhorn (see steps, " + V2Doc + ")"
		return
	}
	note := ""
	if cur != target {
		note = fmt.Sprintf("; status.currentEngineNodeID still names %s, the old engine's node: the sync that moves it is the one that failed", orNone(cur))
	}
	f.Reason = bug + fmt.Sprintf("; keep %s: engine frontend %s sends I/O to it and it is on %s, where Longhorn moves the engine (spec.engineNodeID)%s; fix does not repair v2 volumes: by hand, set spec.active=false on %s (see steps, %s)",
		survivor.Name, activeEFs[0].Name, target, note, strings.Join(stale, ", "), V2Doc)
}

// v2Survivor is the engine serving I/O, or nil and why it is not clear.
func v2Survivor(v *longhorn.Volume, engines, active []*longhorn.Engine, activeEFs []*longhorn.EngineFrontend, target string) (*longhorn.Engine, string) {
	switch len(activeEFs) {
	case 0:
		return nil, "no engine frontend of the volume is active (or none was read)"
	case 1:
	default:
		return nil, fmt.Sprintf("%d engine frontends are active too (%s)", len(activeEFs), strings.Join(frontendNames(activeEFs), ", "))
	}
	ef := activeEFs[0]
	var served *longhorn.Engine
	for _, e := range active {
		if ef.Targets(e) {
			served = e
		}
	}
	if served == nil {
		return nil, fmt.Sprintf("engine frontend %s is connected to %s:%d, the address of no active engine", ef.Name, orNone(ef.Status.TargetIP), ef.Status.TargetPort)
	}
	if ef.Spec.EngineName != served.Name {
		return nil, fmt.Sprintf("engine frontend %s is connected to %s but its spec.engineName is %s: a switchover between them has not settled", ef.Name, served.Name, orNone(ef.Spec.EngineName))
	}
	n := 0
	for _, e := range engines {
		if target != "" && e.Spec.NodeID == target && !e.Deleting() {
			n++
		}
	}
	if served.Spec.NodeID != target || n != 1 {
		return nil, fmt.Sprintf("engine frontend %s sends I/O to %s on %s, but the volume's engine belongs on %s (spec.engineNodeID, else spec.nodeID), where %d engine(s) are", ef.Name, served.Name, orNone(served.Spec.NodeID), orNone(target), n)
	}
	if served.Status.CurrentState != longhorn.StateRunning {
		return nil, fmt.Sprintf("%s, the engine engine frontend %s sends I/O to, is %s, not running", served.Name, ef.Name, orNone(served.Status.CurrentState))
	}
	return served, ""
}

// v2EngineSteps are the steps by hand for two active engines of a v2
// volume: the clean-up of Longhorn 1.12.0's own switchover
// (processEngineSwitchover), which runs once one engine is active.
func v2EngineSteps(ns string, v *longhorn.Volume, survivor *longhorn.Engine, stale []string, activeEFs []*longhorn.EngineFrontend) []string {
	k := kubectlIn(ns)
	steps := []string{saveStep(k, v.Name)}
	if survivor == nil {
		return append(steps,
			"change no engine and no engine frontend: which engine serves I/O is not clear; report the volume to Longhorn (longhorn/longhorn#13951) with the output of kubectl longhorn-engines describe "+v.Name+" -n "+nsOr(ns))
	}
	ef := activeEFs[0]
	steps = append(steps, fmt.Sprintf("check that engine frontend %s still sends I/O to %s: %s must print %s:%d, %s's address (%s)",
		ef.Name, survivor.Name,
		k("get enginefrontends.longhorn.io "+ef.Name+" -o jsonpath='{.status.targetIP}:{.status.targetPort}'"),
		survivor.Status.IP, survivor.Status.Port, survivor.Name,
		k("get engines.longhorn.io "+survivor.Name+" -o jsonpath='{.status.ip}:{.status.port}'")))
	for _, s := range stale {
		steps = append(steps, k("patch engines.longhorn.io "+s+` --type=merge -p '{"spec":{"active":false}}'`))
	}
	return append(steps,
		fmt.Sprintf("Longhorn's next sync takes %s as the current engine; its switchover clean-up deletes %s and points every replica at %s: delete no engine and no replica by hand", survivor.Name, strings.Join(stale, ", "), survivor.Name),
		"kubectl longhorn-engines scan "+v.Name+" -n "+nsOr(ns)+": the finding must be gone")
}

// v2ActiveFrontends: two active engine frontends of a v2 volume. Longhorn
// 1.12.0 judges a volume's frontend by spec.active
// (GetCurrentEngineFrontendAndExtras) and, when it cannot, by node: the one
// frontend on spec.nodeID or status.currentNodeID
// (GetNewCurrentEngineFrontendAndExtras), which is what is kept here, and
// it must send I/O to the volume's active engine.
func v2ActiveFrontends(st *longhorn.State, v *longhorn.Volume, engines, active []*longhorn.Engine, activeEFs []*longhorn.EngineFrontend, f *Finding) {
	f.Type, f.Severity, f.Action = TypeMultipleActiveEngineFrontends, SeverityCritical, ActionNone
	bug := fmt.Sprintf("%d engine frontends of this v2 volume have spec.active=true (%s); Longhorn fails with \"BUG: found the second active engine frontend\" wherever it picks the volume's frontend (attach, detach, expansion, the engine switchover)",
		len(activeEFs), strings.Join(frontendNames(activeEFs), ", "))
	keep, why := frontendSurvivor(v, active, activeEFs)
	var stale []string
	if keep != nil {
		stale = namesExcept(activeEFs, keep.Name)
		f.Keep, f.Stale = keep.Name, stale
	}
	markFrontendRoles(f, f.Keep, f.Stale)
	k := kubectlIn(st.Namespace)
	f.Steps = []string{saveStep(k, v.Name)}
	if keep == nil {
		f.Reason = bug + "; which frontend serves the workload is not clear: " + why + "; fix does not repair v2 volumes: change nothing, report the volume to Longhorn (see steps, " + V2Doc + ")"
		f.Steps = append(f.Steps, "change no engine frontend: which one serves the workload is not clear; report the volume to Longhorn with the output of kubectl longhorn-engines describe "+v.Name+" -n "+nsOr(st.Namespace))
		return
	}
	f.Reason = bug + fmt.Sprintf("; keep %s: it is on the volume's node %s and connected to the active engine %s; fix does not repair v2 volumes: by hand, set spec.active=false on %s (see steps, %s)",
		keep.Name, keep.Spec.NodeID, active[0].Name, strings.Join(stale, ", "), V2Doc)
	for _, s := range stale {
		f.Steps = append(f.Steps, k("patch enginefrontends.longhorn.io "+s+` --type=merge -p '{"spec":{"active":false}}'`))
	}
	f.Steps = append(f.Steps,
		fmt.Sprintf("Longhorn then takes %s as the volume's frontend; a migratable volume's migration clean-up deletes the other(s) on its next sync, on any other volume they stay, inactive: delete none by hand while it is attached", keep.Name),
		"kubectl longhorn-engines scan "+v.Name+" -n "+nsOr(st.Namespace)+": the finding must be gone")
}

// frontendSurvivor is the frontend Longhorn's node rule picks, when it
// picks exactly one, is settled on one node and serves the active engine.
func frontendSurvivor(v *longhorn.Volume, active []*longhorn.Engine, activeEFs []*longhorn.EngineFrontend) (*longhorn.EngineFrontend, string) {
	node, cur := v.Spec.NodeID, v.Status.CurrentNodeID
	if node == "" || node != cur {
		return nil, fmt.Sprintf("spec.nodeID %q and status.currentNodeID %q are not one node", node, cur)
	}
	var on []*longhorn.EngineFrontend
	for _, ef := range activeEFs {
		if ef.Spec.NodeID == node {
			on = append(on, ef)
		}
	}
	if len(on) != 1 {
		return nil, fmt.Sprintf("%d active engine frontends are on the volume's node %s", len(on), node)
	}
	if len(active) != 1 {
		return nil, fmt.Sprintf("%d engines are active", len(active))
	}
	if !on[0].Targets(active[0]) {
		return nil, fmt.Sprintf("%s, the frontend on %s, is connected to %s:%d, not to the active engine %s", on[0].Name, node, orNone(on[0].Status.TargetIP), on[0].Status.TargetPort, active[0].Name)
	}
	return on[0], ""
}

func markFrontendRoles(f *Finding, keep string, stale []string) {
	for i := range f.Evidence.EngineFrontends {
		setRole(&f.Evidence.EngineFrontends[i].Role, f.Evidence.EngineFrontends[i].Name, keep, stale)
	}
}

func frontendNames(efs []*longhorn.EngineFrontend) []string {
	out := make([]string, len(efs))
	for i, ef := range efs {
		out[i] = ef.Name
	}
	return out
}

func nsOr(ns string) string {
	if ns == "" {
		return longhorn.DefaultNamespace
	}
	return ns
}

func kubectlIn(ns string) func(string) string {
	return func(args string) string { return "kubectl -n " + nsOr(ns) + " " + args }
}

// saveStep keeps the YAML of everything a step by hand may change.
func saveStep(k func(string) string, vol string) string {
	return k("get volumes.longhorn.io/"+vol+" -o yaml > "+vol+"-volume.yaml") + "; " +
		k("get engines.longhorn.io,replicas.longhorn.io,enginefrontends.longhorn.io -l longhornvolume="+vol+" -o yaml > "+vol+"-objects.yaml")
}

// frontendEvidence describes the volume's engine frontends.
func frontendEvidence(efs []*longhorn.EngineFrontend) []EngineFrontendEvidence {
	out := make([]EngineFrontendEvidence, 0, len(efs))
	for _, ef := range efs {
		e := EngineFrontendEvidence{
			Name:              ef.Name,
			NodeID:            ef.Spec.NodeID,
			Active:            ef.Spec.Active,
			State:             ef.Status.CurrentState,
			DesireState:       ef.Spec.DesireState,
			EngineName:        ef.Spec.EngineName,
			Target:            address(ef.Spec.TargetIP, ef.Spec.TargetPort),
			ConnectedTo:       address(ef.Status.TargetIP, ef.Status.TargetPort),
			Endpoint:          ef.Status.Endpoint,
			OwnerID:           ef.Status.OwnerID,
			Created:           ef.CreationTimestamp.Time.UTC(),
			DeletionTimestamp: nil,
		}
		if ef.DeletionTimestamp != nil {
			t := ef.DeletionTimestamp.Time.UTC()
			e.DeletionTimestamp = &t
		}
		out = append(out, e)
	}
	return out
}

func address(ip string, port int) string {
	if ip == "" && port == 0 {
		return ""
	}
	return fmt.Sprintf("%s:%d", ip, port)
}

// namesExcept lists the names of objs other than keep, in order.
func namesExcept[T interface{ GetName() string }](objs []T, keep string) []string {
	var out []string
	for _, o := range objs {
		if o.GetName() != keep {
			out = append(out, o.GetName())
		}
	}
	return out
}
