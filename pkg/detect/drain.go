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
	// the volume of each process that has a CR, by the process's name
	engines, replicas := map[string]string{}, map[string]string{}
	for i := range st.Engines {
		engines[st.Engines[i].Name] = longhorn.VolumeOf(&st.Engines[i])
	}
	for i := range st.Replicas {
		replicas[st.Replicas[i].Name] = longhorn.VolumeOf(&st.Replicas[i])
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
		for _, k := range []processKind{
			{"engine", im.EngineProcessNames(), engines, volumeOfEngine, TypeOrphanEngineProcess,
				"engine process with no Engine CR (orphan, longhorn#6552): confirm it is stopped and every volume healthy, then delete this node's instance-manager PDB"},
			{"replica", im.ReplicaProcessNames(), replicas, volumeOfReplica, "",
				"replica process with no Replica CR (orphan, harvester#7366): confirm it is stopped and every volume healthy, then delete this node's instance-manager PDB"},
		} {
			for _, name := range k.names {
				d.Processes = append(d.Processes, k.process(im.Name, name, byVolume))
			}
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

// processKind is one kind of process an instance manager runs, as a drain
// sees it.
type processKind struct {
	kind       string
	names      []string          // the manager's processes of this kind
	crs        map[string]string // the volume of each process with a CR
	nameVolume func(string) string
	orphan     Type // the finding of a process with no CR, if it has one
	orphanWhy  string
}

// process is one process of the manager im: the volume of its CR and that
// volume's finding, or, without a CR, an orphan named after its volume.
func (k processKind) process(im, name string, byVolume map[string]*Finding) DrainProcess {
	p := DrainProcess{InstanceManager: im, Kind: k.kind, Name: name}
	if vol, ok := k.crs[name]; ok {
		p.Volume, p.Why = vol, fmt.Sprintf("%s of volume %s", k.kind, vol)
	} else {
		p.Volume, p.Orphan, p.Why = k.nameVolume(name), true, k.orphanWhy
		if k.orphan != "" {
			p.Finding, p.Severity = k.orphan, SeverityWarning
		}
	}
	explain(&p, byVolume)
	return p
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
