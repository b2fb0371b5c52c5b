package volevents

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The Events section reads like kubectl describe's: a series shows its
// count and span, the source is the component or the reporting
// controller, and text from the cluster cannot move the cursor or colour
// the terminal.
func TestPrintEvents(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	evs := []corev1.Event{
		{Type: "Normal", Reason: "Attached", Message: "volume attached", Count: 1,
			Source: corev1.EventSource{Component: "longhorn-volume-controller", Host: "node-a"}, LastTimestamp: metav1.NewTime(now.Add(-10 * time.Minute))},
		{Type: "Warning", Reason: "RepairRefused", Message: "no safe action\x1b[31m\n", ReportingController: Controller,
			EventTime: metav1.NewMicroTime(now.Add(-5 * time.Minute)),
			Series:    &corev1.EventSeries{Count: 3, LastObservedTime: metav1.NewMicroTime(now.Add(-time.Minute))}},
	}
	var b strings.Builder
	if err := Print(&b, evs, now); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"Events:\n", "Type", "longhorn-volume-controller, node-a", "10m", "RepairRefused", "60s (x3 over 5m)", Controller, `no safe action\u001b[31m`} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if strings.ContainsRune(out, 0x1b) {
		t.Errorf("an escape character reached the output:\n%q", out)
	}
	b.Reset()
	_ = Print(&b, nil, now)
	if b.String() != "Events:  <none>\n" {
		t.Errorf("no Events: %q", b.String())
	}
}
