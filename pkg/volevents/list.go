package volevents

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/safetext"
)

// List reads the Events of a volume the way `kubectl describe` does: core/v1
// Events whose involvedObject is the Volume (by name, namespace, kind and,
// when known, uid). It finds the Events of Longhorn's own controllers as
// well as this plugin's (events.k8s.io/v1 Events are the same objects).
func List(ctx context.Context, cfg *rest.Config, v Volume) ([]corev1.Event, error) {
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	sel := fields.Set{
		"involvedObject.name":      v.Name,
		"involvedObject.namespace": v.Namespace,
		"involvedObject.kind":      longhorn.Volumes.Kind,
	}
	if v.UID != "" {
		sel["involvedObject.uid"] = string(v.UID)
	}
	var out []corev1.Event
	opts := metav1.ListOptions{FieldSelector: sel.AsSelector().String(), Limit: 500}
	for {
		l, err := c.CoreV1().Events(v.Namespace).List(ctx, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, l.Items...)
		if l.Continue == "" {
			break
		}
		opts.Continue = l.Continue
	}
	sort.SliceStable(out, func(i, j int) bool { return lastSeen(out[i]).Before(lastSeen(out[j])) })
	return out, nil
}

// Print writes an Events: section as kubectl describe does: one row per
// Event, oldest first, with its age ("3m (x2 over 10m)" for a series), its
// source and its message; "<none>" when there are none. Everything that came
// from the cluster is escaped.
func Print(w io.Writer, evs []corev1.Event, now time.Time) error {
	if len(evs) == 0 {
		_, err := fmt.Fprintln(w, "Events:  <none>")
		return err
	}
	fmt.Fprintln(w, "Events:")
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  Type\tReason\tAge\tFrom\tMessage")
	fmt.Fprintln(tw, "  ----\t------\t----\t----\t-------")
	for _, e := range evs {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", safetext.Escape(e.Type), safetext.Escape(e.Reason), age(e, now), safetext.Escape(source(e)), safetext.Escape(strings.TrimSpace(message(e))))
	}
	return tw.Flush()
}

func message(e corev1.Event) string { return e.Message }

func source(e corev1.Event) string {
	switch {
	case e.Source.Component != "":
		s := e.Source.Component
		if e.Source.Host != "" {
			s += ", " + e.Source.Host
		}
		return s
	case e.ReportingController != "":
		return e.ReportingController
	}
	return "-"
}

func firstSeen(e corev1.Event) time.Time {
	switch {
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

func lastSeen(e corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	}
	return firstSeen(e)
}

// age is kubectl describe's: the time since the last occurrence and, for
// repeated Events, how many over how long.
func age(e corev1.Event, now time.Time) string {
	count := e.Count
	if e.Series != nil {
		count = e.Series.Count
	}
	last := duration.HumanDuration(now.Sub(lastSeen(e)))
	if count > 1 {
		return fmt.Sprintf("%s (x%d over %s)", last, count, duration.HumanDuration(now.Sub(firstSeen(e))))
	}
	return last
}
