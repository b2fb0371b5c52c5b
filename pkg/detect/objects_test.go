package detect

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// A finding pins every object of its volume by uid and resourceVersion, in
// name order, with the flags fix compares; ObjectsOf pins the same from the
// state, for a volume with no finding.
func TestFindingPinsItsObjects(t *testing.T) {
	s := stuck(vcL14a, "vol")
	other := stuck(vcL14a, "other")
	s.st.Volumes = append(s.st.Volumes, other.st.Volumes...)
	s.st.Engines = append(s.st.Engines, other.st.Engines...)
	s.st.Replicas = append(s.st.Replicas, other.st.Replicas...)
	s.volume().UID, s.volume().ResourceVersion = types.UID("uid-vol"), "7"
	for i := range s.st.Engines {
		e := &s.st.Engines[i]
		e.UID, e.ResourceVersion = types.UID("uid-"+e.Name), "rv-"+e.Name
	}
	for i := range s.st.Replicas {
		r := &s.st.Replicas[i]
		r.UID, r.ResourceVersion = types.UID("uid-"+r.Name), "rv-"+r.Name
	}
	_, f := s.classify(t)
	o := f.Objects
	if o.VolumeUID != "uid-vol" || o.VolumeResourceVersion != "7" {
		t.Errorf("volume pinned as %q/%q", o.VolumeUID, o.VolumeResourceVersion)
	}
	if len(o.Engines) != 2 || len(o.Replicas) != len(s.replicasOf(s.engA))+len(s.replicasOf(s.engB)) {
		t.Fatalf("objects of another volume, or some missing: %+v", o)
	}
	for i := 1; i < len(o.Engines); i++ {
		if o.Engines[i-1].Name > o.Engines[i].Name {
			t.Errorf("engines not in name order: %+v", o.Engines)
		}
	}
	keep, ok := o.Engine(f.Keep)
	e := s.engine(f.Keep)
	if !ok || keep.UID != string(e.UID) || keep.ResourceVersion != e.ResourceVersion || keep.NodeID != e.Spec.NodeID || !keep.Active || keep.Deleting {
		t.Errorf("keep pinned as %+v", keep)
	}
	for _, c := range f.ReplicaChanges {
		r, ok := o.Replica(c.Replica)
		if !ok || r.UID != "uid-"+c.Replica || r.EngineName != c.FromEngine || r.Active != c.FromActive {
			t.Errorf("replica %s pinned as %+v (change %+v)", c.Replica, r, c)
		}
	}
	if got := ObjectsOf(s.st, "vol"); !reflect.DeepEqual(got, o) {
		t.Errorf("ObjectsOf = %+v, want %+v", got, o)
	}
	if got := ObjectsOf(s.st, "gone"); !reflect.DeepEqual(got, Objects{}) {
		t.Errorf("ObjectsOf a missing volume = %+v", got)
	}
}
