package migrate

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

const (
	nodeA = testenv.NodeA
	nodeB = testenv.NodeB
)

// snapOf turns fixture objects of one volume into a snapshot, as
// readSnapshot would read them.
func snapOf(t *testing.T, o *testenv.Objects) *snapshot {
	t.Helper()
	if len(o.Volumes) != 1 {
		t.Fatalf("want one volume, got %d", len(o.Volumes))
	}
	s := &snapshot{version: longhorn.MustParseVersion(o.Version), volume: *o.Volumes[0], read: time.Now()}
	s.volume.ResourceVersion = "100"
	for i, e := range o.Engines {
		c := *e
		c.ResourceVersion = "200"
		c.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC))
		for _, d := range o.Deleting {
			if d == c.Name {
				now := metav1.Now()
				c.DeletionTimestamp = &now
			}
		}
		s.engines = append(s.engines, c)
	}
	for _, r := range o.Replicas {
		s.replicas = append(s.replicas, *r)
	}
	if len(o.VAs) == 1 {
		va := *o.VAs[0]
		va.ResourceVersion = "300"
		s.va = &va
	}
	return s
}

// confirmed is the state after a finished confirm to B: one engine on B,
// its replicas active, the old ones gone.
func confirmed(version, vol string) *testenv.Objects {
	o := testenv.PendingCleanup(version, vol)
	old := o.Deleting[0]
	o.Deleting = nil
	var es []*longhorn.Engine
	for _, e := range o.Engines {
		if e.Name != old {
			es = append(es, e)
		}
	}
	o.Engines = es
	var rs []*longhorn.Replica
	for _, r := range o.Replicas {
		if r.Spec.EngineName != old {
			rs = append(rs, r)
		}
	}
	o.Replicas = rs
	o.Volumes[0].Status.CurrentMigrationNodeID = ""
	return o
}

func mustCheck(t *testing.T, cs checks, name string, wantOK bool) {
	t.Helper()
	for _, c := range cs {
		if c.Name == name {
			if c.OK != wantOK {
				t.Errorf("check %q ok=%t, want %t (%s)", name, c.OK, wantOK, c.Detail)
			}
			return
		}
	}
	t.Errorf("no check %q in %+v", name, cs)
}
