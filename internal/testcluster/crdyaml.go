package testcluster

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// InstallCRDYAML installs every CustomResourceDefinition of a multi-document
// YAML — a Longhorn release's own k8s/crds.yaml, say — and returns once each
// is served without delay, as InstallCRDs does. Documents of other kinds are
// skipped. Webhook conversion is rewritten to None: this server runs no
// conversion webhook, and Longhorn's controllers and the tool use only the
// storage version (v1beta2), which needs no conversion. A CRD that already
// exists is replaced by this one. Create and Reset then know these kinds
// too; GVR knows only the embedded ones.
func (c *Cluster) InstallCRDYAML(ctx context.Context, data []byte) error {
	crds, err := ParseCRDYAML(data)
	if err != nil {
		return err
	}
	start := time.Now()
	crdClient := c.crdClient.ApiextensionsV1().CustomResourceDefinitions()
	defs := make([]*crdDef, 0, len(crds))
	for _, crd := range crds {
		_, err := crdClient.Create(ctx, crd.DeepCopy(), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			var old *apiextensionsv1.CustomResourceDefinition
			if old, err = crdClient.Get(ctx, crd.Name, metav1.GetOptions{}); err == nil {
				upd := crd.DeepCopy()
				upd.ResourceVersion = old.ResourceVersion
				_, err = crdClient.Update(ctx, upd, metav1.UpdateOptions{})
			}
		}
		if err != nil {
			return fmt.Errorf("testcluster: install CRD %s: %w", crd.Name, err)
		}
		d := &crdDef{kind: crd.Spec.Names.Kind, plural: crd.Spec.Names.Plural, crd: crd}
		if len(crd.Spec.Names.ShortNames) > 0 {
			d.short = crd.Spec.Names.ShortNames[0]
		}
		defs = append(defs, d)
	}
	c.mu.Lock()
	if c.yamlDefs == nil {
		c.yamlDefs = map[string]*crdDef{}
	}
	for _, d := range defs {
		c.yamlDefs[d.crd.Name] = d
	}
	c.mu.Unlock()
	return c.serveCRDs(ctx, defs, "from YAML ", start)
}

// ParseCRDYAML returns the CustomResourceDefinitions of a multi-document
// YAML in group longhorn.io, ready to create on a test server: webhook
// conversion rewritten to None (no test server runs the webhook) and no
// status.
func ParseCRDYAML(data []byte) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*apiextensionsv1.CustomResourceDefinition
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("testcluster: CRD YAML: %w", err)
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return nil, fmt.Errorf("testcluster: CRD YAML: %w", err)
		}
		if tm.Kind != "CustomResourceDefinition" {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(doc, crd); err != nil {
			return nil, fmt.Errorf("testcluster: CRD YAML: %w", err)
		}
		if crd.Spec.Group != Group {
			return nil, fmt.Errorf("testcluster: CRD %s is not in group %s", crd.Name, Group)
		}
		if crd.Spec.Conversion != nil && crd.Spec.Conversion.Strategy == apiextensionsv1.WebhookConverter {
			crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
		}
		crd.Status = apiextensionsv1.CustomResourceDefinitionStatus{}
		out = append(out, crd)
	}
	if len(out) == 0 {
		return nil, errors.New("testcluster: CRD YAML holds no CustomResourceDefinition")
	}
	return out, nil
}

// lookupInstalled finds a kind among the CRDs installed from YAML, then
// among the embedded ones; names as for GVR.
func (c *Cluster) lookupInstalled(name string) (*crdDef, error) {
	c.mu.Lock()
	for _, d := range c.yamlDefs {
		if matchesCRD(d, name) {
			c.mu.Unlock()
			return d, nil
		}
	}
	c.mu.Unlock()
	return lookupCRD(name)
}
