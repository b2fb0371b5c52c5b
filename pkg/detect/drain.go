package detect

import (
	"fmt"
	"sort"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// NodeDrain is what holds one node's drain: Longhorn's instance-manager
// PodDisruptionBudgets on it and the processes its instance managers run,
// each with the volume it serves and the finding that explains it.
type NodeDrain struct {
	Node string `json:"node"`
	// PDBs are the budgets of this node's instance managers; Holding is
	// true when one refuses every eviction now.
	PDBs    []DrainPDB `json:"pdbs"`
	Holding bool       `json:"holding"`
	// Processes are the engine and replica processes of the node's
	// instance managers, in instance-manager then process name order.
	Processes []DrainProcess `json:"processes"`
	// NotChecked says what could not be read, so that an empty list is
	// never taken for "nothing holds the drain".
	NotChecked []string `json:"notChecked,omitempty"`
}

// DrainPDB is one instance-manager PodDisruptionBudget.
type DrainPDB struct {
	Name               string `json:"name"`
	InstanceManager    string `json:"instanceManager"`
	MinAvailable       string `json:"minAvailable,omitempty"`
	DisruptionsAllowed int    `json:"disruptionsAllowed"`
}

// DrainProcess is one process an instance manager runs.
type DrainProcess struct {
	InstanceManager string `json:"instanceManager"`
	// Kind is engine or replica.
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Volume is the volume of the Engine or Replica CR, or the one its name
	// suggests for an orphan.
	Volume string `json:"volume"`
	// Orphan: no Engine or Replica CR of that name exists.
	Orphan bool `json:"orphan"`
	// Finding is the type of the volume's finding (OrphanEngineProcess for
	// an orphan engine), "" for a healthy volume.
	Finding  Type     `json:"finding,omitempty"`
	Severity Severity `json:"severity,omitempty"`
	// Why says in a sentence why this process keeps the budget.
	Why string `json:"why"`
}

// DrainView builds the per-node view from a state and its classification,
// for every node with an instance manager (node "" = every node). It is
// pure, like Classify.
func DrainView(st *longhorn.State, res Result, node string) []NodeDrain {
	byVolume := map[string]*Finding{}
	for i := range res.Findings {
		f := &res.Findings[i]
		if f.Type == TypeOrphanEngineProcess || f.Type == TypeOrphanEngine {
			continue
		}
		if _, ok := byVolume[f.Volume]; !ok {
			byVolume[f.Volume] = f
		}
	}
	engines := map[string]*longhorn.Engine{}
	for i := range st.Engines {
		engines[st.Engines[i].Name] = &st.Engines[i]
	}
	replicas := map[string]*longhorn.Replica{}
	for i := range st.Replicas {
		replicas[st.Replicas[i].Name] = &st.Replicas[i]
	}
	var notChecked []string
	if !st.InstanceManagersRead {
		notChecked = append(notChecked, "instance managers not read: the processes on the node are unknown")
	}
	if !st.PDBsRead.Read {
		notChecked = append(notChecked, "poddisruptionbudgets not read ("+orText(st.PDBsRead.Note, "not in the input")+"): whether a budget refuses evictions is unknown")
	}
	nodes := map[string]*NodeDrain{}
	get := func(n string) *NodeDrain {
		d := nodes[n]
		if d == nil {
			d = &NodeDrain{Node: n, PDBs: []DrainPDB{}, Processes: []DrainProcess{}, NotChecked: notChecked}
			nodes[n] = d
		}
		return d
	}
	pdbs := map[string]*longhorn.PDB{}
	for i := range st.PDBs {
		pdbs[st.PDBs[i].Name] = &st.PDBs[i]
	}
	ims := make([]*longhorn.InstanceManager, len(st.InstanceManagers))
	for i := range st.InstanceManagers {
		ims[i] = &st.InstanceManagers[i]
	}
	sort.SliceStable(ims, func(i, j int) bool { return ims[i].Name < ims[j].Name })
	for _, im := range ims {
		n := im.Spec.NodeID
		if node != "" && n != node {
			continue
		}
		d := get(n)
		if p := pdbs[im.Name]; p != nil {
			d.PDBs = append(d.PDBs, DrainPDB{Name: p.Name, InstanceManager: im.Name, MinAvailable: p.MinAvailable, DisruptionsAllowed: p.DisruptionsAllowed})
			d.Holding = d.Holding || p.Holds()
		}
		for _, name := range im.EngineProcessNames() {
			p := DrainProcess{InstanceManager: im.Name, Kind: "engine", Name: name}
			if e := engines[name]; e != nil {
				p.Volume = longhorn.VolumeOf(e)
				p.Why = fmt.Sprintf("engine of volume %s", p.Volume)
			} else {
				p.Volume, p.Orphan = volumeOfEngine(name), true
				p.Finding, p.Severity = TypeOrphanEngineProcess, SeverityWarning
				p.Why = "engine process with no Engine CR (orphan, longhorn#6552): confirm it is stopped and every volume healthy, then delete this node's instance-manager PDB"
			}
			explain(&p, byVolume)
			d.Processes = append(d.Processes, p)
		}
		for _, name := range im.ReplicaProcessNames() {
			p := DrainProcess{InstanceManager: im.Name, Kind: "replica", Name: name}
			if r := replicas[name]; r != nil {
				p.Volume = longhorn.VolumeOf(r)
				p.Why = fmt.Sprintf("replica of volume %s", p.Volume)
			} else {
				p.Volume, p.Orphan = volumeOfReplica(name), true
				p.Why = "replica process with no Replica CR (orphan, harvester#7366): confirm it is stopped and every volume healthy, then delete this node's instance-manager PDB"
			}
			explain(&p, byVolume)
			d.Processes = append(d.Processes, p)
		}
	}
	if node != "" && nodes[node] == nil {
		// a node with no instance manager read: say so rather than nothing
		get(node)
	}
	out := make([]NodeDrain, 0, len(nodes))
	for _, d := range nodes {
		out = append(out, *d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}

// explain adds the volume's finding to a process that has a CR.
func explain(p *DrainProcess, byVolume map[string]*Finding) {
	if p.Orphan {
		return
	}
	f := byVolume[p.Volume]
	if f == nil {
		p.Why += ": healthy; Longhorn lets the drain go once the volume is detached or has moved"
		return
	}
	p.Finding, p.Severity = f.Type, f.Severity
	p.Why += fmt.Sprintf(": %s (%s)", f.Type, f.Severity)
}

// volumeOfReplica derives the volume from "<vol>-r-<suffix>".
func volumeOfReplica(name string) string {
	for i := len(name) - 3; i > 0; i-- {
		if name[i:i+3] == "-r-" {
			return name[:i]
		}
	}
	return name
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}
