package longhorn

import "testing"

func TestSelectAndNamed(t *testing.T) {
	st := &State{
		Volumes: []Volume{{ObjectMeta: ObjectMeta{Name: "a"}}, {ObjectMeta: ObjectMeta{Name: "b"}}},
		Engines: []Engine{
			{ObjectMeta: ObjectMeta{Name: "a-e-0"}, Spec: EngineSpec{VolumeName: "a"}},
			{ObjectMeta: ObjectMeta{Name: "b-e-0", Labels: map[string]string{VolumeLabel: "b"}}},
			{ObjectMeta: ObjectMeta{Name: "a-e-1"}, Spec: EngineSpec{VolumeName: "a"}},
		},
	}
	if v := st.Volume("b"); v != &st.Volumes[1] {
		t.Errorf("Volume(b) = %p, want a pointer into Volumes (%p)", v, &st.Volumes[1])
	}
	if v := st.Volume("c"); v != nil {
		t.Errorf("Volume(c) = %+v, want nil", v)
	}
	es := st.EnginesOf("a")
	if len(es) != 2 || es[0] != &st.Engines[0] || es[1] != &st.Engines[2] {
		t.Errorf("EnginesOf(a) = %v, want the first and the third engine, in order", es)
	}
	if es := st.EnginesOf("b"); len(es) != 1 || es[0].Name != "b-e-0" {
		t.Errorf("EnginesOf(b) = %v, want b-e-0 by its label", es)
	}
	if e := Named(st.Engines, "b-e-0"); e != &st.Engines[1] {
		t.Errorf("Named(b-e-0) = %p, want %p", e, &st.Engines[1])
	}
	if rs := st.ReplicasOf("a"); rs != nil {
		t.Errorf("ReplicasOf(a) = %v, want none", rs)
	}
}

func TestVolumeState(t *testing.T) {
	st := &State{
		Volumes: []Volume{{ObjectMeta: ObjectMeta{Name: "a"}}},
		Engines: []Engine{
			{ObjectMeta: ObjectMeta{Name: "a-e-0"}, Spec: EngineSpec{VolumeName: "a"}},
			{ObjectMeta: ObjectMeta{Name: "b-e-0"}, Spec: EngineSpec{VolumeName: "b"}},
		},
		Replicas: []Replica{
			{ObjectMeta: ObjectMeta{Name: "a-r-0", Labels: map[string]string{VolumeLabel: "a"}}},
			{ObjectMeta: ObjectMeta{Name: "a-r-1"}, Spec: ReplicaSpec{VolumeName: "a"}},
		},
	}
	v, es, rs := st.VolumeState("a")
	if v != &st.Volumes[0] || len(es) != 1 || es[0].Name != "a-e-0" || len(rs) != 2 || rs[0].Name != "a-r-0" || rs[1].Name != "a-r-1" {
		t.Fatalf("VolumeState(a) = %v, %v, %v; want the volume, a-e-0, and a-r-0 (by its label) and a-r-1", v, es, rs)
	}
	// copies: a check may change them without changing st
	es[0].Spec.Active = true
	if st.Engines[0].Spec.Active {
		t.Error("VolumeState returned the state's own engine, not a copy")
	}
	if v, es, rs := st.VolumeState("b"); v != nil || len(es) != 1 || len(rs) != 0 {
		t.Errorf("VolumeState(b) = %v, %v, %v; want no volume, b-e-0, no replica", v, es, rs)
	}
}
