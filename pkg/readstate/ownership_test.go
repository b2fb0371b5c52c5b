//go:build !fuzz

package readstate_test

import (
	"context"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/readstate"
)

// The per-volume read judges the attachment it gets by name with
// longhorn.VolumeOf, as the namespace read does: one named after the volume
// whose spec.volume names another is not the volume's.
func TestReadVolumeOwnsTheAttachmentByVolumeOf(t *testing.T) {
	c := cluster(t)
	ctx := context.Background()
	cl, _ := countingClient(t, c)
	ns := "va-owner"
	o := testenv.Healthy("v1.5.1", "vol")
	o.Add(testenv.Healthy("v1.5.1", "mine"))
	o.VAs[0].Spec.Volume = "other" // vol's attachment, naming another volume
	createIn(t, c, ns, o)

	for vol, want := range map[string]int{"vol": 0, "mine": 1} {
		r, err := readstate.ReadVolume(ctx, cl, ns, vol)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(r.State.VolumeAttachments); got != want || (want == 0) != (r.Raw.VolumeAttachment == nil) {
			t.Errorf("%s: %d attachments (raw %d bytes), want %d", vol, got, len(r.Raw.VolumeAttachment), want)
		}
		whole, err := readstate.Load(ctx, cl, readstate.LoadOptions{Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for i := range whole.VolumeAttachments {
			if longhorn.VolumeOf(&whole.VolumeAttachments[i]) == vol {
				n++
			}
		}
		if n != want {
			t.Errorf("%s: the namespace read gives it %d attachments, the named read %d", vol, n, want)
		}
	}
}
