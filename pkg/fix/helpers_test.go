package fix

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
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
	st.Volumes = stored(o.Volumes, st.Namespace, next)
	st.Engines = stored(o.Engines, st.Namespace, next)
	for i := range st.Engines {
		if deleting[st.Engines[i].Name] {
			st.Engines[i].DeletionTimestamp = deletionTime()
		}
	}
	st.Replicas = stored(o.Replicas, st.Namespace, next)
	st.VolumeAttachments = stored(o.VAs, st.Namespace, next)
	return st
}

// stored copies fixture objects as the API server stores them: in ns, with
// a uid and the next resourceVersion each.
func stored[T any, P interface {
	*T
	metav1.Object
}](objs []*T, ns string, next func() string) []T {
	var out []T
	for _, o := range objs {
		c := *o
		p := P(&c)
		p.SetNamespace(ns)
		p.SetUID(types.UID("uid-" + p.GetName()))
		p.SetResourceVersion(next())
		out = append(out, c)
	}
	return out
}

// planOne classifies and plans one volume of a state.
func planOne(t *testing.T, st *longhorn.State, vol string, s Strategy) Planned {
	t.Helper()
	return planRead(st, vol, s, 0)
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
