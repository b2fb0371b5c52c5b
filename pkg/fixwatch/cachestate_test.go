package fixwatch

import (
	"testing"
	"time"

	"k8s.io/client-go/tools/cache"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/safetext"
)

// TestStateForEscapes: what the guard classifies, and so prints, of a
// cached object is escaped for a terminal, as every other command's read
// is: a node name and a ticket carrying a title-setting sequence come out
// as text.
func TestStateForEscapes(t *testing.T) {
	const raw = "node-b\x1b]0;pwned\x07\x1b[2J"
	g := &Guard{ns: "longhorn-system", inf: map[string]cache.SharedIndexInformer{}}
	add := func(r longhorn.Resource, obj any) {
		inf := g.inf[r.Plural]
		if inf == nil {
			inf = cache.NewSharedIndexInformer(&cache.ListWatch{}, nil, 0, cache.Indexers{volumeIndex: volumeIndexFunc(r)})
			g.inf[r.Plural] = inf
		}
		if err := inf.GetIndexer().Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	meta := func(name string) longhorn.ObjectMeta { return longhorn.ObjectMeta{Name: name, Namespace: g.ns} }
	add(longhorn.Volumes, &longhorn.Volume{ObjectMeta: meta("pvc-1"), Status: longhorn.VolumeStatus{CurrentNodeID: raw}})
	add(longhorn.Engines, &longhorn.Engine{ObjectMeta: meta("pvc-1-e-0"), Spec: longhorn.EngineSpec{VolumeName: "pvc-1", NodeID: raw}})
	add(longhorn.VolumeAttachments, &longhorn.VolumeAttachment{ObjectMeta: meta("pvc-1"), Spec: longhorn.VolumeAttachmentSpec{Volume: "pvc-1",
		AttachmentTickets: map[string]longhorn.AttachmentTicket{raw: {ID: raw, NodeID: raw}}}})
	st, found, err := g.stateFor("pvc-1", time.Now())
	if err != nil || !found {
		t.Fatalf("stateFor: found %v, %v", found, err)
	}
	if len(st.Engines) != 1 || len(st.VolumeAttachments) != 1 {
		t.Fatalf("state: %d engines, %d attachments", len(st.Engines), len(st.VolumeAttachments))
	}
	if bad := safetext.NotPrintable(st); len(bad) > 0 {
		t.Errorf("raw text in the guard's state: %q", bad)
	}
	// the cache keeps the objects as they came: only the copies change
	obj, _, _ := g.inf[longhorn.Engines.Plural].GetStore().GetByKey(g.ns + "/pvc-1-e-0")
	if obj.(*longhorn.Engine).Spec.NodeID != raw {
		t.Errorf("the cache was changed")
	}
}
