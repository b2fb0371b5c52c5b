package fixwatch

import (
	"fmt"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/volevents"
)

// refused records a volume that needs attention in a state the guard does
// not repair: counted by finding type, and a Warning Event on the volume
// saying why. It is called once each time the volume enters such a state.
func (g *Guard) refused(st *longhorn.State, vol string, f *detect.Finding) {
	g.m.refused(f)
	if g.ev == nil {
		return
	}
	v := volevents.Volume{Namespace: g.ns, Name: vol}
	if len(st.Volumes) == 1 {
		v.UID = st.Volumes[0].UID
	}
	note := fmt.Sprintf("%s (%s): %s; the guard does not repair this state", f.Type, f.Severity, f.Reason)
	g.ev.Record(v, volevents.Warning, fix.ReasonRepairRefused, "Repair", note)
}

// volumeRef names a volume for its Events, with its uid from the cache.
func (g *Guard) volumeRef(vol string) volevents.Volume {
	v := volevents.Volume{Namespace: g.ns, Name: vol}
	if inf := g.informer(longhorn.Volumes); inf != nil {
		if obj, ok, err := inf.GetStore().GetByKey(g.ns + "/" + vol); err == nil && ok {
			if m := objectMeta(obj); m != nil {
				v.UID = m.GetUID()
			}
		}
	}
	return v
}
