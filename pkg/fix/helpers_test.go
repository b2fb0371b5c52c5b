package fix

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Longhorn releases of each behaviour class, as the tests use them.
var (
	vL13  = "v1.3.2"
	vL14a = "v1.4.3"
	vL14f = "v1.4.4"
	vL15a = "v1.5.1"
	vL15f = "v1.5.2"
	vL16  = "v1.6.0"
)

// stateOf turns fixture objects into a State as a read from the API server
// would give it: uids, resourceVersions, deletion timestamps.
func stateOf(o *testenv.Objects) *longhorn.State {
	st := &longhorn.State{Namespace: longhorn.DefaultNamespace, Now: time.Now()}
	if o.Version != "" {
		st.Version = longhorn.MustParseVersion(o.Version)
	}
	rv := 100
	next := func() string { rv++; return fmt.Sprint(rv) }
	deleting := map[string]bool{}
	for _, n := range o.Deleting {
		deleting[n] = true
	}
	for _, v := range o.Volumes {
		c := *v
		c.Namespace, c.UID, c.ResourceVersion = st.Namespace, types.UID("uid-"+c.Name), next()
		st.Volumes = append(st.Volumes, c)
	}
	for _, e := range o.Engines {
		c := *e
		c.Namespace, c.UID, c.ResourceVersion = st.Namespace, types.UID("uid-"+c.Name), next()
		if deleting[c.Name] {
			c.DeletionTimestamp = deletionTime()
		}
		st.Engines = append(st.Engines, c)
	}
	for _, r := range o.Replicas {
		c := *r
		c.Namespace, c.UID, c.ResourceVersion = st.Namespace, types.UID("uid-"+c.Name), next()
		st.Replicas = append(st.Replicas, c)
	}
	for _, va := range o.VAs {
		c := *va
		c.Namespace, c.UID, c.ResourceVersion = st.Namespace, types.UID("uid-"+c.Name), next()
		st.VolumeAttachments = append(st.VolumeAttachments, c)
	}
	return st
}

// planOne classifies and plans one volume of a state.
func planOne(t *testing.T, st *longhorn.State, vol string, s Strategy) Planned {
	t.Helper()
	return planRead(st, vol, s, 0)
}

func engineOf(st *longhorn.State, name string) *longhorn.Engine {
	for i := range st.Engines {
		if st.Engines[i].Name == name {
			return &st.Engines[i]
		}
	}
	return nil
}

func replicaOf(st *longhorn.State, name string) *longhorn.Replica {
	for i := range st.Replicas {
		if st.Replicas[i].Name == name {
			return &st.Replicas[i]
		}
	}
	return nil
}

func volumeOf(st *longhorn.State, name string) *longhorn.Volume {
	for i := range st.Volumes {
		if st.Volumes[i].Name == name {
			return &st.Volumes[i]
		}
	}
	return nil
}

func removeEngine(st *longhorn.State, name string) {
	out := st.Engines[:0]
	for _, e := range st.Engines {
		if e.Name != name {
			out = append(out, e)
		}
	}
	st.Engines = out
}

// finishConfirm is what Longhorn does after fix: the stale engines go, the
// survivor's replicas become active and the others go.
func finishConfirm(st *longhorn.State, keep string) {
	var es []longhorn.Engine
	for _, e := range st.Engines {
		if e.Name == keep {
			es = append(es, e)
		}
	}
	st.Engines = es
	var rs []longhorn.Replica
	for _, r := range st.Replicas {
		if r.Spec.EngineName == keep {
			r.Spec.Active = true
			rs = append(rs, r)
		}
	}
	st.Replicas = rs
	for i := range st.Volumes {
		st.Volumes[i].Status.CurrentMigrationNodeID = ""
	}
}
