package testcluster

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"
)

// Group and Version of every Longhorn resource this package serves.
const (
	Group   = "longhorn.io"
	Version = "v1beta2"
)

//go:embed crds/*.yaml
var crdFiles embed.FS

// crdDef is one embedded CRD, parsed once.
type crdDef struct {
	kind   string
	plural string
	short  string
	yaml   []byte
	crd    *apiextensionsv1.CustomResourceDefinition
}

// crdOrder is the order of Kinds() and CRDs(): the files, not a map, decide it.
var crdOrder = []string{"volume", "engine", "replica", "volumeattachment", "node", "setting", "instancemanager"}

var crdDefs = mustLoadCRDs()

func mustLoadCRDs() []crdDef {
	defs := make([]crdDef, 0, len(crdOrder))
	for _, name := range crdOrder {
		data, err := crdFiles.ReadFile("crds/" + name + ".yaml")
		if err != nil {
			panic(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			panic(fmt.Sprintf("testcluster: crds/%s.yaml: %v", name, err))
		}
		defs = append(defs, crdDef{
			kind:   crd.Spec.Names.Kind,
			plural: crd.Spec.Names.Plural,
			short:  crd.Spec.Names.ShortNames[0],
			yaml:   data,
			crd:    crd,
		})
	}
	return defs
}

// Kinds lists the Longhorn kinds whose CRDs are embedded, in a stable order.
func Kinds() []string {
	out := make([]string, len(crdDefs))
	for i, d := range crdDefs {
		out[i] = d.kind
	}
	return out
}

// CRDs returns the embedded CRD manifests (YAML, one CRD each) in the order of
// Kinds, for installing them into some other API server.
func CRDs() [][]byte {
	out := make([][]byte, len(crdDefs))
	for i, d := range crdDefs {
		out[i] = bytes.Clone(d.yaml)
	}
	return out
}

// GVR returns the GroupVersionResource of a Longhorn kind. It accepts the kind
// ("Engine"), the plural ("engines"), the short name ("lhe") or the CRD name
// ("engines.longhorn.io"), case-insensitively, and panics on anything else:
// it is meant for test code with literal arguments.
func GVR(kind string) schema.GroupVersionResource {
	d, err := lookupCRD(kind)
	if err != nil {
		panic(err)
	}
	return schema.GroupVersionResource{Group: Group, Version: Version, Resource: d.plural}
}

func lookupCRD(name string) (*crdDef, error) {
	for i := range crdDefs {
		if d := &crdDefs[i]; matchesCRD(d, name) {
			return d, nil
		}
	}
	return nil, fmt.Errorf("testcluster: unknown Longhorn kind %q (known: %s)", name, strings.Join(Kinds(), ", "))
}

// matchesCRD reports whether name is d's kind, plural, short name or CRD
// name, case-insensitively.
func matchesCRD(d *crdDef, name string) bool {
	n := strings.TrimSuffix(strings.ToLower(name), "."+Group)
	return n == strings.ToLower(d.kind) || n == d.plural || (d.short != "" && n == d.short)
}

func lookupCRDs(kinds []string) ([]*crdDef, error) {
	if len(kinds) == 0 {
		out := make([]*crdDef, len(crdDefs))
		for i := range crdDefs {
			out[i] = &crdDefs[i]
		}
		return out, nil
	}
	out := make([]*crdDef, 0, len(kinds))
	for _, k := range kinds {
		d, err := lookupCRD(k)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// InstallCRDs installs the CRDs of the given Longhorn kinds (all of them when
// none is given; names as for GVR) and returns once each resource is served
// without delay: Established, its watch cache built, and no create sleeping.
// Installing an already installed CRD is not an error.
func (c *Cluster) InstallCRDs(ctx context.Context, kinds ...string) error {
	defs, err := lookupCRDs(kinds)
	if err != nil {
		return err
	}
	start := time.Now()
	crdClient := c.crdClient.ApiextensionsV1().CustomResourceDefinitions()
	for _, d := range defs {
		_, err := crdClient.Create(ctx, d.crd.DeepCopy(), metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("testcluster: create CRD %s: %w", d.crd.Name, err)
		}
	}
	return c.serveCRDs(ctx, defs, "", start)
}

// serveCRDs returns once the created CRDs defs are served without delay:
// Established, in discovery, their watch caches built and no create
// sleeping. from says where they came from in the log line.
func (c *Cluster) serveCRDs(ctx context.Context, defs []*crdDef, from string, start time.Time) error {
	if err := c.waitEstablished(ctx, defs); err != nil {
		return err
	}
	if err := c.backdateEstablished(ctx, defs); err != nil {
		return err
	}
	c.syncDiscoveryGroup(ctx)
	if err := c.warmResources(ctx, defs); err != nil {
		return err
	}
	c.logf("testcluster: %d CRDs %sserved in %v", len(defs), from, time.Since(start).Round(time.Millisecond))
	return nil
}

// UninstallCRDs deletes the CRDs of the given kinds (all when none is given)
// and waits until the server answers 404 for them. Their objects go with them.
func (c *Cluster) UninstallCRDs(ctx context.Context, kinds ...string) error {
	defs, err := lookupCRDs(kinds)
	if err != nil {
		return err
	}
	crdClient := c.crdClient.ApiextensionsV1().CustomResourceDefinitions()
	for _, d := range defs {
		err := crdClient.Delete(ctx, d.crd.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("testcluster: delete CRD %s: %w", d.crd.Name, err)
		}
	}
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, d := range defs {
			if _, err := crdClient.Get(ctx, d.crd.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false, nil
			}
			if code, _ := c.rawGet(ctx, c.listPath(d.plural)); code != http.StatusNotFound {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("testcluster: CRDs still served after delete: %w", err)
	}
	c.mu.Lock()
	c.lastUninstall = time.Now()
	c.mu.Unlock()
	c.syncDiscoveryGroup(ctx)
	return nil
}

func (c *Cluster) waitEstablished(ctx context.Context, defs []*crdDef) error {
	crdClient := c.crdClient.ApiextensionsV1().CustomResourceDefinitions()
	var last string
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, d := range defs {
			crd, err := crdClient.Get(ctx, d.crd.Name, metav1.GetOptions{})
			if err != nil {
				last = err.Error()
				return false, nil
			}
			if !crdCondition(crd, apiextensionsv1.Established) {
				last = d.crd.Name + " not Established"
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("testcluster: waiting for CRDs to be Established (%s): %w", last, err)
	}
	return nil
}

func crdCondition(crd *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType) bool {
	for _, cond := range crd.Status.Conditions {
		if cond.Type == t {
			return cond.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

// backdateEstablished moves the Established condition's lastTransitionTime a
// minute into the past. The API server sleeps 2 s in every create of a custom
// resource whose CRD became Established less than 2 s ago (a guard for HA
// control planes); with a single server it only slows tests down. The
// condition stays true, so nothing else changes behaviour.
func (c *Cluster) backdateEstablished(ctx context.Context, defs []*crdDef) error {
	crdClient := c.crdClient.ApiextensionsV1().CustomResourceDefinitions()
	past := metav1.NewTime(time.Now().Add(-time.Minute))
	for _, d := range defs {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			crd, err := crdClient.Get(ctx, d.crd.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			changed := false
			for i := range crd.Status.Conditions {
				cond := &crd.Status.Conditions[i]
				if cond.Type == apiextensionsv1.Established && cond.LastTransitionTime.After(past.Time) {
					cond.LastTransitionTime = past
					changed = true
				}
			}
			if !changed {
				return nil
			}
			_, err = crdClient.UpdateStatus(ctx, crd, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("testcluster: backdate Established of %s: %w", d.crd.Name, err)
		}
	}
	return nil
}

func (c *Cluster) listPath(plural string) string {
	return "/apis/" + Group + "/" + Version + "/namespaces/" + c.namespace + "/" + plural
}

// warmResources makes the first real request to each resource fast. Until a
// resource's watch cache is built the server answers 429 with Retry-After: 1,
// and client-go then sleeps a whole second; a plain HTTP client that does not
// retry polls instead. A server-side dry-run create afterwards proves creates
// no longer sleep (see backdateEstablished) and warms the create path.
func (c *Cluster) warmResources(ctx context.Context, defs []*crdDef) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	errs := make([]error, len(defs))
	var wg sync.WaitGroup
	for i, d := range defs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.warmResource(ctx, d)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (c *Cluster) warmResource(ctx context.Context, d *crdDef) error {
	path := c.listPath(d.plural)
	var code int
	var body string
	err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		code, body = c.rawGet(ctx, path+"?limit=1")
		return code == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("testcluster: %s not served (last answer %d %s): %w", d.plural, code, body, err)
	}
	obj := fmt.Sprintf(`{"apiVersion":%q,"kind":%q,"metadata":{"name":"testcluster-warmup","namespace":%q}}`,
		Group+"/"+Version, d.kind, c.namespace)
	var took time.Duration
	err = wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		t0 := time.Now()
		code, body = c.rawDo(ctx, http.MethodPost, path+"?dryRun=All", obj)
		took = time.Since(t0)
		switch code {
		// 422: a release's own schema may require fields the warm-up
		// object lacks; the create path was reached all the same.
		case http.StatusCreated, http.StatusOK, http.StatusConflict, http.StatusUnprocessableEntity:
			return true, nil
		case http.StatusTooManyRequests:
			return false, nil
		}
		return false, fmt.Errorf("%d %s", code, body)
	})
	if err != nil {
		return fmt.Errorf("testcluster: warm-up dry-run create of %s: %w", d.plural, err)
	}
	if took > time.Second {
		c.logf("testcluster: warm-up create of %s took %v", d.plural, took.Round(time.Millisecond))
	}
	return nil
}

// rawGet and rawDo talk HTTP without client-go's retry-on-429 logic.
func (c *Cluster) rawGet(ctx context.Context, path string) (int, string) {
	return c.rawDo(ctx, http.MethodGet, path, "")
}

func (c *Cluster) rawDo(ctx context.Context, method, path, body string) (int, string) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.host+path, rd)
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Authorization", "Bearer "+c.adminToken)
	req.Header.Set("Accept", "application/json")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.httpClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, strings.TrimSpace(string(data))
}

// installedLonghornCRDs lists the longhorn.io CRDs the server has, whether
// embedded here or not.
func (c *Cluster) installedLonghornCRDs(ctx context.Context) ([]apiextensionsv1.CustomResourceDefinition, error) {
	list, err := c.crdClient.ApiextensionsV1().CustomResourceDefinitions().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []apiextensionsv1.CustomResourceDefinition
	for _, crd := range list.Items {
		if crd.Spec.Group == Group && crd.DeletionTimestamp == nil {
			out = append(out, crd)
		}
	}
	return out, nil
}

// syncDiscoveryGroup lists longhorn.io in the legacy (non-aggregated) /apis
// document while any of its CRDs is installed. A full cluster gets that from
// the aggregator; kubectl older than 1.30 reads only the legacy document.
// Errors only cost old-kubectl discovery, so they are logged, not returned.
func (c *Cluster) syncDiscoveryGroup(ctx context.Context) {
	crds, err := c.installedLonghornCRDs(ctx)
	if err != nil {
		c.logf("testcluster: discovery sync: %v", err)
		return
	}
	c.mu.Lock()
	srv := c.api
	c.mu.Unlock()
	if srv == nil {
		return
	}
	mgr := srv.server.GenericAPIServer.DiscoveryGroupManager
	if len(crds) == 0 {
		mgr.RemoveGroup(Group)
		return
	}
	gv := metav1.GroupVersionForDiscovery{GroupVersion: Group + "/" + Version, Version: Version}
	mgr.AddGroup(metav1.APIGroup{
		Name:             Group,
		Versions:         []metav1.GroupVersionForDiscovery{gv},
		PreferredVersion: gv,
	})
}
