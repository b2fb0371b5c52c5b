package fixwatch_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fixwatch"
)

const monitoringGroup = "monitoring.coreos.com"

// The fields of the Prometheus Operator's objects that deploy/ sets; strict
// decoding into them catches a misspelt or misplaced field.
type serviceMonitor struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       struct {
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames"`
		} `json:"namespaceSelector"`
		Endpoints []struct {
			Port     string `json:"port"`
			Path     string `json:"path"`
			Interval string `json:"interval"`
		} `json:"endpoints"`
	} `json:"spec"`
}

type prometheusRule struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Alert       string            `json:"alert"`
				Expr        string            `json:"expr"`
				For         string            `json:"for"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

// The scrape path holds together: the Service selects the Job's pod and
// targets its metrics port, which is the port the Job's
// --metrics-bind-address serves; the ServiceMonitor selects the Service and
// scrapes that port; the alerts use the guard's metric names and the job
// label the Service gives, and each says which Longhorn releases it covers.
func TestMonitoringManifests(t *testing.T) {
	docs := manifest(t, "guard-monitoring.yaml")
	var svc corev1.Service
	if err := yaml.UnmarshalStrict(docs["Service"], &svc); err != nil {
		t.Fatal(err)
	}
	var sm serviceMonitor
	if err := yaml.UnmarshalStrict(docs["ServiceMonitor"], &sm); err != nil {
		t.Fatal(err)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(manifest(t, "guard-job.yaml")["Job"], &job); err != nil {
		t.Fatal(err)
	}
	c := job.Spec.Template.Spec.Containers[0]
	args := jobArgs(t)
	i := slices.Index(args, "--metrics-bind-address")
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("the Job serves no metrics: %v", args)
	}
	_, port, _ := strings.Cut(args[i+1], ":")
	if len(c.Ports) != 1 || c.Ports[0].Name != "metrics" || strconv.Itoa(int(c.Ports[0].ContainerPort)) != port {
		t.Errorf("container ports %+v, --metrics-bind-address %s", c.Ports, args[i+1])
	}
	for k, v := range svc.Spec.Selector {
		if job.Spec.Template.Labels[k] != v {
			t.Errorf("the Service selects %v, the Job's pod has %v", svc.Spec.Selector, job.Spec.Template.Labels)
		}
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != "metrics" {
		t.Errorf("Service ports %+v: want one targeting the container's metrics port", svc.Spec.Ports)
	}
	if sm.APIVersion != monitoringGroup+"/v1" || !maps.Equal(sm.Spec.Selector.MatchLabels, svc.Labels) ||
		!slices.Equal(sm.Spec.NamespaceSelector.MatchNames, []string{svc.Namespace}) ||
		len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != svc.Spec.Ports[0].Name || sm.Spec.Endpoints[0].Path != "/metrics" {
		t.Errorf("the ServiceMonitor does not scrape the Service's metrics port: %+v", sm.Spec)
	}

	b, err := os.ReadFile(filepath.Join(deployDir, "guard-alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var pr prometheusRule
	if err := yaml.UnmarshalStrict(b, &pr); err != nil {
		t.Fatal(err)
	}
	if pr.APIVersion != monitoringGroup+"/v1" || pr.Kind != "PrometheusRule" || len(pr.Spec.Groups) != 2 {
		t.Fatalf("guard-alerts.yaml: %s %s with %d groups", pr.APIVersion, pr.Kind, len(pr.Spec.Groups))
	}
	for _, g := range pr.Spec.Groups {
		for _, r := range g.Rules {
			if r.Annotations["releases"] == "" || r.Annotations["summary"] == "" || r.Labels["severity"] == "" {
				t.Errorf("alert %s: no releases or summary annotation, or no severity", r.Alert)
			}
			guard := strings.Contains(r.Expr, fixwatch.MetricsPrefix)
			if (g.Name == "longhorn-engines-guard") != guard {
				t.Errorf("alert %s in group %s: uses the guard's metrics %v", r.Alert, g.Name, guard)
			}
			if strings.Contains(r.Expr, "job=") && !strings.Contains(r.Expr, `job="`+svc.Name+`"`) {
				t.Errorf("alert %s: its job label is not the Service's name %s", r.Alert, svc.Name)
			}
		}
	}
}
