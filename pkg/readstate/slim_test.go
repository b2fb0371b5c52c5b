package readstate

import (
	"encoding/json"
	"reflect"
	"testing"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

func decodeEngine(t *testing.T, js string) *longhorn.Engine {
	t.Helper()
	var e longhorn.Engine
	if err := json.Unmarshal([]byte(js), &e); err != nil {
		t.Fatal(err)
	}
	return &e
}

const engineJSON = `{"apiVersion":"longhorn.io/v1beta2","kind":"Engine",
 "metadata":{"name":"vol-e-0","namespace":"longhorn-system","uid":"u1","resourceVersion":"7",
  "labels":{"longhornvolume":"vol","longhornnode":"n1"},"annotations":{"a":"b"},
  "finalizers":["longhorn.io"],"ownerReferences":[{"apiVersion":"longhorn.io/v1beta2","kind":"Volume","name":"vol","uid":"v"}],
  "managedFields":[{"manager":"longhorn-manager","operation":"Update"}]},
 "spec":{"volumeName":"vol","nodeID":"n1","active":true,"replicaAddressMap":{"vol-r-1":"tcp://10.0.0.1:10000"}},
 "status":{"currentState":"running","ownerID":"n1","replicaModeMap":{"vol-r-1":"RW"},
  "snapshots":{"snap-1":{"name":"snap-1","children":{"volume-head":true}},"volume-head":{"name":"volume-head"}}}}`

// What slim clears is nothing classification reads: the typed view is the
// same but for those fields, and the volume is still found.
func TestSlimKeepsWhatIsRead(t *testing.T) {
	before, after := decodeEngine(t, engineJSON), decodeEngine(t, engineJSON)
	slim(after, interner{})

	if after.Labels != nil {
		t.Errorf("labels kept: %+v", after.Labels)
	}
	if longhorn.VolumeOf(after) != "vol" {
		t.Errorf("volume %q", longhorn.VolumeOf(after))
	}
	if after.Status.Snapshots != nil {
		t.Error("snapshots kept")
	}
	before.Labels = nil
	before.Status.Snapshots = nil
	if !reflect.DeepEqual(before, after) {
		t.Errorf("slim changed what is read:\n%+v\nwant\n%+v", after, before)
	}
}

// An engine whose spec names no volume keeps the label VolumeOf reads.
func TestSlimKeepsVolumeLabelWhenSpecIsEmpty(t *testing.T) {
	for _, obj := range []any{
		&longhorn.Engine{ObjectMeta: longhorn.ObjectMeta{Labels: map[string]string{longhorn.VolumeLabel: "vol", "other": "x"}}},
		&longhorn.Replica{ObjectMeta: longhorn.ObjectMeta{Labels: map[string]string{longhorn.VolumeLabel: "vol", "other": "x"}}},
	} {
		slim(obj, nil)
		if v := longhorn.VolumeOf(obj); v != "vol" {
			t.Errorf("%T: volume %q, want vol", obj, v)
		}
		if l := obj.(metav1.Object).GetLabels(); len(l) != 1 {
			t.Errorf("%T: labels %v", obj, l)
		}
	}
}

// Equal values of different objects end up as one string; values are
// unchanged.
func TestInternerShares(t *testing.T) {
	in := interner{}
	a, b := decodeEngine(t, engineJSON), decodeEngine(t, engineJSON)
	if unsafe.StringData(a.Spec.NodeID) == unsafe.StringData(b.Spec.NodeID) {
		t.Fatal("encoding/json shared the strings itself: the test proves nothing")
	}
	slim(a, in)
	slim(b, in)
	for _, p := range [][2]string{
		{a.Namespace, b.Namespace}, {a.Spec.NodeID, b.Spec.NodeID},
		{a.Status.CurrentState, b.Status.CurrentState}, {a.Status.ReplicaModeMap["vol-r-1"], b.Status.ReplicaModeMap["vol-r-1"]},
	} {
		if p[0] != p[1] || unsafe.StringData(p[0]) != unsafe.StringData(p[1]) {
			t.Errorf("%q not shared", p[0])
		}
	}
	if a.Spec.NodeID != "n1" || a.Namespace != "longhorn-system" || a.Status.ReplicaModeMap["vol-r-1"] != "RW" {
		t.Errorf("values changed: %+v", a)
	}
	va := &longhorn.VolumeAttachment{Spec: longhorn.VolumeAttachmentSpec{AttachmentTickets: map[string]longhorn.AttachmentTicket{
		"t1": {ID: "t1", Type: longhorn.AttacherTypeCSI, NodeID: "n1", Parameters: map[string]string{"disableFrontend": "false"}},
		"t2": {ID: "other", NodeID: "n1"},
	}}}
	slim(va, in)
	if got := va.Spec.AttachmentTickets; got["t1"].ID != "t1" || got["t2"].ID != "other" || got["t1"].Parameters != nil {
		t.Errorf("tickets %+v", got)
	}
}
