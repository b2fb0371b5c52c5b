package migrate

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// TestWritesCarryResourceVersion: every write of both drivers is pinned to
// the resourceVersion of the object it was decided on, and says exactly
// what its driver is meant to write.
func TestWritesCarryResourceVersion(t *testing.T) {
	decode := func(t *testing.T, w write) map[string]any {
		t.Helper()
		b, err := w.patch()
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	rv := func(m map[string]any) any { return m["metadata"].(map[string]any)["resourceVersion"] }
	spec := func(m map[string]any) map[string]any { return m["spec"].(map[string]any) }

	t.Run("v1.4", func(t *testing.T) {
		idle := snapOf(t, testenv.Healthy("v1.4.3", "vol"))
		d := driverFor(idle.version)
		if _, ok := d.(v14Driver); !ok {
			t.Fatalf("driverFor(v1.4.3) = %T", d)
		}
		w, err := d.start(idle, nodeB)
		if err != nil {
			t.Fatal(err)
		}
		m := decode(t, w)
		if rv(m) != "100" || spec(m)["migrationNodeID"] != nodeB || len(spec(m)) != 1 || w.res != longhorn.Volumes {
			t.Errorf("start patch = %v on %s", m, w.res.Plural)
		}
		mig := snapOf(t, testenv.MidMigration("v1.4.3", "vol"))
		m = decode(t, must(d.confirm(mig, nodeB)))
		if rv(m) != "100" || spec(m)["nodeID"] != nodeB || spec(m)["migrationNodeID"] != "" {
			t.Errorf("confirm patch = %v", m)
		}
		m = decode(t, must(d.rollback(mig, nodeB)))
		if rv(m) != "100" || spec(m)["migrationNodeID"] != "" || len(spec(m)) != 1 {
			t.Errorf("rollback patch = %v", m)
		}
		if _, err := d.rollback(idle, nodeB); err != errNothingToRollBack {
			t.Errorf("rollback without a migration: %v, want errNothingToRollBack", err)
		}
		if _, err := d.confirm(idle, nodeB); err == nil {
			t.Error("confirm without a migration gave a write")
		}
	})
	t.Run("v1.5", func(t *testing.T) {
		idle := snapOf(t, testenv.Healthy("v1.5.1", "vol"))
		d := driverFor(idle.version)
		if _, ok := d.(v15Driver); !ok {
			t.Fatalf("driverFor(v1.5.1) = %T", d)
		}
		idB, idA := longhorn.CSITicketID("vol", nodeB), longhorn.CSITicketID("vol", nodeA)
		w := must(d.start(idle, nodeB))
		m := decode(t, w)
		tickets := spec(m)["attachmentTickets"].(map[string]any)
		tb, _ := tickets[idB].(map[string]any)
		if w.res != longhorn.VolumeAttachments || rv(m) != "300" || len(tickets) != 1 || tb["type"] != "csi-attacher" || tb["nodeID"] != nodeB || tb["id"] != idB {
			t.Errorf("start patch = %v", m)
		}
		if _, has := tb["generation"]; has {
			t.Error("start patch sets generation: that is the webhook's")
		}
		mig := snapOf(t, testenv.MidMigration("v1.5.1", "vol"))
		m = decode(t, must(d.confirm(mig, nodeB)))
		tickets = spec(m)["attachmentTickets"].(map[string]any)
		if v, ok := tickets[idA]; !ok || v != nil || len(tickets) != 1 || rv(m) != "300" {
			t.Errorf("confirm patch = %v, want only %s set to null", m, idA)
		}
		m = decode(t, must(d.rollback(mig, nodeB)))
		tickets = spec(m)["attachmentTickets"].(map[string]any)
		if v, ok := tickets[idB]; !ok || v != nil || len(tickets) != 1 {
			t.Errorf("rollback patch = %v, want only %s set to null", m, idB)
		}
	})
	if _, err := (write{}).patch(); err == nil {
		t.Error("a write without resourceVersion rendered a patch")
	}
}

func must(w write, err error) write {
	if err != nil {
		panic(err)
	}
	return w
}

func TestReadiness(t *testing.T) {
	for _, ver := range []string{"v1.4.3", "v1.4.4", "v1.5.1", "v1.6.0"} {
		t.Run(ver, func(t *testing.T) {
			d := driverFor(longhorn.MustParseVersion(ver))
			ready := func(mut func(s *snapshot)) readiness {
				s := snapOf(t, testenv.MidMigration(ver, "vol"))
				if mut != nil {
					mut(s)
				}
				return checkReady(s, d, nodeB)
			}
			if r := ready(nil); !r.ready || r.engine == "" {
				t.Fatalf("mid-migration fixture not ready: %s", r)
			}
			mig := func(s *snapshot) *longhorn.Engine { return &s.engines[1] }
			cases := []struct {
				name   string
				mut    func(s *snapshot)
				failed bool
				want   string
			}{
				{"no endpoint", func(s *snapshot) { mig(s).Status.Endpoint = "" }, false, "no endpoint"},
				{"starting", func(s *snapshot) { mig(s).Status.CurrentState = longhorn.StateStarting }, false, "state starting"},
				{"fewer RW", func(s *snapshot) {
					for r := range mig(s).Status.ReplicaModeMap {
						mig(s).Status.ReplicaModeMap[r] = longhorn.ModeWO
						break
					}
				}, false, "RW replicas 1/2"},
				{"snapshots differ", func(s *snapshot) { mig(s).Status.Snapshots = nil }, false, "snapshots not in sync"},
				{"clone replica stopped", func(s *snapshot) { s.replicas[len(s.replicas)-1].Status.CurrentState = longhorn.StateStopped }, false, "not running"},
				{"no migration engine", func(s *snapshot) { s.engines = s.engines[:1] }, false, "no migration engine"},
				{"migration engine error", func(s *snapshot) { mig(s).Status.CurrentState = longhorn.StateError }, false, "Longhorn replaces it"},
				{"old engine stopped", func(s *snapshot) { s.engines[0].Status.CurrentState = longhorn.StateStopped }, true, "not running"},
				{"clone missing from the engine's map", func(s *snapshot) {
					for r := range mig(s).Spec.ReplicaAddressMap {
						delete(mig(s).Spec.ReplicaAddressMap, r)
						break
					}
				}, false, "Longhorn restarts it to match"},
				{"data directory cloned twice", func(s *snapshot) {
					dup := s.replicas[len(s.replicas)-1]
					dup.Name += "-twice"
					s.replicas = append(s.replicas, dup)
				}, true, "cloned data directory /var/lib/longhorn/replicas/vol-d1 twice"},
				{"clone being deleted", func(s *snapshot) {
					now := metav1.Now()
					s.replicas[len(s.replicas)-1].DeletionTimestamp = &now
				}, false, "is being deleted"},
				{"not started", func(s *snapshot) {
					s.volume.Spec.MigrationNodeID = ""
					s.volume.Status.CurrentMigrationNodeID = ""
				}, false, "migration not started"},
			}
			if d.mechanism() == (v15Driver{}).mechanism() {
				cases = append(cases, struct {
					name   string
					mut    func(s *snapshot)
					failed bool
					want   string
				}{"ticket not satisfied", func(s *snapshot) {
					id := longhorn.CSITicketID("vol", nodeB)
					st := s.va.Status.AttachmentTicketStatuses[id]
					st.Satisfied = false
					st.Conditions = []longhorn.Condition{{Type: "Satisfied", Status: "False", Message: "waiting for volume to migrate to node node-b"}}
					s.va.Status.AttachmentTicketStatuses[id] = st
				}, false, "waiting for volume to migrate"})
			}
			for _, c := range cases {
				r := ready(c.mut)
				if r.ready || (r.failed != "") != c.failed || !strings.Contains(r.String(), c.want) {
					t.Errorf("%s: ready=%t failed=%q missing=%v; want not ready, failed=%t, mentioning %q", c.name, r.ready, r.failed, r.missing, c.failed, c.want)
				}
			}
		})
	}
}

func TestVerify(t *testing.T) {
	for _, ver := range []string{"v1.4.3", "v1.5.1", "v1.6.0"} {
		t.Run(ver, func(t *testing.T) {
			if v := checkVerified(snapOf(t, confirmed(ver, "vol")), "ns", nodeB); !v.ok {
				t.Errorf("confirmed state not verified on B: %v", v.missing)
			}
			if v := checkVerified(snapOf(t, confirmed(ver, "vol")), "ns", nodeA); v.ok {
				t.Error("confirmed state verified on A")
			}
			if v := checkVerified(snapOf(t, testenv.Healthy(ver, "vol")), "ns", nodeA); !v.ok {
				t.Errorf("healthy volume not verified on A: %v", v.missing)
			}
			if v := checkVerified(snapOf(t, testenv.MidMigration(ver, "vol")), "ns", nodeA); v.ok || v.bad != nil {
				t.Errorf("mid-migration verified=%t bad=%v, want waiting", v.ok, v.bad)
			}
			pending := checkVerified(snapOf(t, testenv.PendingCleanup(ver, "vol")), "ns", nodeB)
			if pending.ok || pending.bad != nil {
				t.Errorf("pending cleanup: ok=%t bad=%v, want waiting (expected briefly after a confirm)", pending.ok, pending.bad)
			}
			two := checkVerified(snapOf(t, testenv.TwoActiveEngines(ver, "vol")), "ns", nodeB)
			if two.ok || two.bad == nil || two.bad.Type != detect.TypeMultipleActiveEngines {
				t.Errorf("two active engines: ok=%t bad=%v, want MultipleActiveEngines", two.ok, two.bad)
			}
			s := snapOf(t, confirmed(ver, "vol"))
			s.replicas[0].Spec.Active = false
			if v := checkVerified(s, "ns", nodeB); v.ok {
				t.Error("an inactive replica passed verification")
			}
			if s := snapOf(t, confirmed(ver, "vol")); s.version.HasVolumeAttachments() {
				s.va = testenv.NewVA("vol", nodeA)
				if v := checkVerified(s, "ns", nodeB); v.ok {
					t.Error("verified on B without B's ticket")
				}
			}
		})
	}
}

// TestEngineToSwitchTo: before 1.5 a confirm is written only while the
// migration engine runs on the target; parked off its node, Longhorn would
// never finish the confirm (detect's ConfirmWithoutEngine), and verification
// reports that state instead of waiting for it. From 1.5 Longhorn places the
// engine itself.
func TestEngineToSwitchTo(t *testing.T) {
	park := func(s *snapshot) {
		e := &s.engines[1]
		e.Spec.NodeID, e.Spec.DesireState, e.Status.CurrentState = "", longhorn.StateStopped, longhorn.StateStopped
	}
	for _, tc := range []struct {
		ver  string
		mut  func(s *snapshot)
		want string
	}{
		{"v1.4.3", nil, ""},
		{"v1.4.3", park, "stopped with no node"},
		{"v1.4.3", func(s *snapshot) { s.engines[1].Status.CurrentState = longhorn.StateStarting }, "no migration engine runs on node-b"},
		{"v1.5.1", park, ""},
	} {
		s := snapOf(t, testenv.MidMigration(tc.ver, "vol"))
		if tc.mut != nil {
			tc.mut(s)
		}
		got := engineToSwitchTo(s, nodeB)
		if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.ver, got, tc.want)
		}
	}
	s := snapOf(t, testenv.MidMigration("v1.4.3", "vol"))
	park(s)
	s.volume.Spec.NodeID, s.volume.Spec.MigrationNodeID, s.volume.Status.CurrentNodeID = nodeB, "", nodeB
	if v := checkVerified(s, "ns", nodeB); v.ok || v.bad == nil || v.bad.Type != detect.TypeConfirmWithoutEngine {
		t.Errorf("confirm without engine: ok=%t bad=%v, want ConfirmWithoutEngine", v.ok, v.bad)
	}
	// Longhorn confirmed by itself onto B and put both engines there: fix
	// repairs it (the realtest's other outcome of a source engine crash)
	for _, ver := range []string{"v1.4.3", "v1.5.3"} {
		v := checkVerified(snapOf(t, testenv.EnginesOnOneNode(ver, "vol")), "ns", nodeB)
		if v.ok || v.bad == nil || v.bad.Type != detect.TypeEnginesOnOneNode || !fixRepairs(*v.bad) {
			t.Errorf("%s engines on one node: ok=%t bad=%v, want EnginesOnOneNode that fix repairs", ver, v.ok, v.bad)
		}
	}
}

// TestProvenCheck: migrate starts and confirms migrations only on the
// releases where that ran on Longhorn's own controllers with nothing lost;
// on 1.12 the refusal names the clean-up that wipes under a conflict.
func TestProvenCheck(t *testing.T) {
	for ver, ok := range map[string]bool{"v1.4.3": true, "v1.10.0": true, "v1.10.3": true, "v1.11.1": true, "v1.12.0": false, "v1.13.0": false} {
		c := provenCheck(longhorn.MustParseVersion(ver))
		if c.OK != ok {
			t.Errorf("%s: %+v, want ok=%t", ver, c, ok)
		}
		if cleanup := strings.Contains(c.Detail, "clean-up"); cleanup != (ver == "v1.12.0" || ver == "v1.13.0") {
			t.Errorf("%s: names the 1.12 clean-up: %t, want %t: %s", ver, cleanup, !cleanup, c.Detail)
		}
	}
}

func TestStartChecks(t *testing.T) {
	nodes := map[string]*longhorn.Node{nodeB: testenv.NewNode(nodeB, true, true)}
	for _, ver := range []string{"v1.4.3", "v1.6.0"} {
		t.Run(ver, func(t *testing.T) {
			ok := snapOf(t, testenv.Healthy(ver, "vol"))
			if f := startChecks(ok, nodes[nodeB], nodeB).failed(); len(f) > 0 {
				t.Fatalf("healthy migratable volume refused: %+v", f)
			}
			cases := []struct {
				name  string
				check string
				mut   func(s *snapshot)
				node  *longhorn.Node
				to    string
			}{
				{"not migratable", "volume migratable and rwx", func(s *snapshot) { s.volume.Spec.Migratable = false }, nil, ""},
				{"rwo", "volume migratable and rwx", func(s *snapshot) { s.volume.Spec.AccessMode = longhorn.AccessModeRWO }, nil, ""},
				{"detached", "attached", func(s *snapshot) { s.volume.Status.State = longhorn.VolumeStateDetached }, nil, ""},
				{"faulted", "healthy or degraded", func(s *snapshot) { s.volume.Status.Robustness = longhorn.RobustnessFaulted }, nil, ""},
				{"migrating", "not already migrating", func(s *snapshot) { s.volume.Spec.MigrationNodeID = "node-c" }, nil, ""},
				{"upgrade", "no engine upgrade pending", func(s *snapshot) { s.volume.Status.CurrentImage = "old" }, nil, ""},
				{"standby", "no restore, expansion or DR standby", func(s *snapshot) { s.volume.Spec.Standby = true }, nil, ""},
				{"restored volume, restore pending", "no restore, expansion or DR standby", func(s *snapshot) { s.volume.Status.RestoreRequired = true }, nil, ""},
				{"expansion pending", "no restore, expansion or DR standby", func(s *snapshot) { s.volume.Status.ExpansionRequired = true }, nil, ""},
				{"rebuilding", "no replica rebuilding", func(s *snapshot) {
					for r := range s.engines[0].Status.ReplicaModeMap {
						s.engines[0].Status.ReplicaModeMap[r] = longhorn.ModeWO
						break
					}
				}, nil, ""},
				{"two engines", "one running engine on the current node", func(s *snapshot) { s.engines = append(s.engines, s.engines[0]) }, nil, ""},
				{"same node", "target is another node", nil, testenv.NewNode(nodeA, true, true), nodeA},
				{"unknown node", "target node exists in Longhorn", nil, nil, "node-x"},
				{"not ready", "target node Ready", nil, testenv.NewNode(nodeB, false, true), nodeB},
				{"unschedulable", "target node schedulable", nil, testenv.NewNode(nodeB, true, false), nodeB},
			}
			for _, c := range cases {
				s := snapOf(t, testenv.Healthy(ver, "vol"))
				if c.mut != nil {
					c.mut(s)
				}
				node, to := nodes[nodeB], nodeB
				if c.to != "" {
					node, to = c.node, c.to
				}
				cs := startChecks(s, node, to)
				mustCheck(t, cs, c.check, false)
				if len(cs.failed()) == 0 {
					t.Errorf("%s: not refused", c.name)
				}
			}
		})
	}
	t.Run("v1.6.0 tickets", func(t *testing.T) {
		s := snapOf(t, testenv.Healthy("v1.6.0", "vol"))
		s.va = testenv.NewVA("vol", "node-c")
		mustCheck(t, startChecks(s, nodes[nodeB], nodeB), "csi-attacher ticket on the current node", false)
		s.va = testenv.NewVA("vol", nodeA, "node-c")
		mustCheck(t, startChecks(s, nodes[nodeB], nodeB), "not already migrating", false)
	})
	// 1.7+: Longhorn's webhook counts every ticket, so a snapshot, backup
	// or rebuild ticket next to the csi ticket makes the start fail.
	// From 1.11 only csi-attacher tickets count.
	for _, typ := range []string{"snapshot-controller", "backup-controller", "volume-rebuilding-controller"} {
		for _, ver := range []string{"v1.6.0", "v1.7.0", "v1.10.0", "v1.11.1"} {
			s := snapOf(t, testenv.Healthy(ver, "vol"))
			s.va = testenv.NewVA("vol", nodeA)
			mustCheck(t, startChecks(s, nodes[nodeB], nodeB), "csi-attacher ticket on the current node", true)
			s.va.Spec.AttachmentTickets["t-"+typ] = longhorn.AttachmentTicket{ID: "t-" + typ, Type: typ, NodeID: nodeA}
			cs := startChecks(s, nodes[nodeB], nodeB)
			if ver == "v1.6.0" {
				for _, c := range cs {
					if c.Name == "attachment tickets within Longhorn's limit" {
						t.Errorf("%s: ticket limit checked before 1.7", ver)
					}
				}
				continue
			}
			mustCheck(t, cs, "attachment tickets within Longhorn's limit", ver == "v1.11.1")
		}
	}
}

func TestWorkloadUsage(t *testing.T) {
	s := snapOf(t, testenv.Healthy("v1.4.3", "vol"))
	s.kube.WorkloadsStatus = append(s.kube.WorkloadsStatus, longhorn.WorkloadStatus{PodName: "virt-launcher-vm1-abcde", PodStatus: "Running"})
	if got := s.inUseByPods(); len(got) != 1 || !strings.Contains(got[0], "virt-launcher") {
		t.Errorf("inUseByPods = %v", got)
	}
	s.kube.LastPodRefAt = "2026-01-01T00:00:00Z"
	if got := s.inUseByPods(); len(got) != 0 {
		t.Errorf("inUseByPods after lastPodRefAt = %v, want none", got)
	}
	if c := (usage{determined: false, note: "forbidden"}).check(); c.OK || !strings.Contains(c.Detail, "could not determine") {
		t.Errorf("undetermined use passed: %+v", c)
	}
	if c := (usage{determined: true, inUse: true, evidence: []string{"x"}}).check(); c.OK {
		t.Errorf("in use passed: %+v", c)
	}
}

// TestColumns: status's tables align by characters (a node name may hold
// any), three spaces between columns, nothing after the last.
func TestColumns(t *testing.T) {
	var out bytes.Buffer
	s := &session{o: &StepOptions{volumeOptions: volumeOptions{IOStreams: genericiooptions.IOStreams{Out: &out}}}}
	s.columns([][]string{{"ENGINE", "NODE", "STATE"}, {"e-1", "nœud-b", "running"}, {"e-22", "n", "stopped"}})
	want := "ENGINE   NODE     STATE\ne-1      nœud-b   running\ne-22     n        stopped\n"
	if out.String() != want {
		t.Errorf("columns:\n%q\nwant\n%q", out.String(), want)
	}
}

// An engine left off its volume's node after a confirm does not resolve by
// waiting (Longhorn 1.5.3, explorer seed 27 state 92), nor two active
// replicas on one directory; a finish does.
func TestBadAfterConfirm(t *testing.T) {
	for ty, want := range map[detect.Type]bool{
		detect.TypeEngineOffNode: true,
		// a confirm finished with a clone and its original both active on
		// one directory: settled, but a wipe waiting (seed 27 state 22)
		detect.TypeSharedReplicaDirectory: true,
		detect.TypeEnginesOnOneNode:       true,
		detect.TypeMultipleActiveEngines:  true,
		detect.TypeMigrationFinishing:     false,
		detect.TypePendingCleanup:         false,
	} {
		if got := badAfterConfirm(ty); got != want {
			t.Errorf("badAfterConfirm(%s) = %t, want %t", ty, got, want)
		}
	}
}
