// Package readstate is the one reader of Longhorn state: the custom
// resources, the pods and CSI attachments that use the volumes, and the
// managers' logs, into a longhorn.State — from a live cluster (a namespace
// with paginated LISTs, or one volume in a constant number of requests) and,
// offline, from support bundles and YAML/JSON files.
package readstate

import (
	"errors"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Client talks to the longhorn.io/v1beta2 API: a raw REST client that decodes
// lists straight into our structs (no unstructured maps on the read path) and a
// dynamic client for writes that must keep every field of an object.
type Client struct {
	REST    rest.Interface
	Dynamic dynamic.Interface
	Config  *rest.Config
}

// Client-side rate limits when the configuration sets none. client-go's
// default (5 requests/s, bursts of 10) would hold a scan of 10,000 volumes
// (about 120 pages) back for 20 s; these are kubectl's discovery limits,
// still far below what an API server's priority and fairness admits.
const (
	defaultQPS   = 50
	defaultBurst = 300
)

// NewClient builds both clients from one rest.Config.
func NewClient(cfg *rest.Config) (*Client, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(withReadRetry)
	if cfg.QPS == 0 && cfg.Burst == 0 && cfg.RateLimiter == nil {
		cfg.QPS, cfg.Burst = defaultQPS, defaultBurst
	}
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &schema.GroupVersion{Group: longhorn.Group, Version: longhorn.APIVersionName}
	c.APIPath = "/apis"
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	c.AcceptContentTypes = "application/json"
	c.ContentType = "application/json"
	if c.UserAgent == "" {
		c.UserAgent = "kubectl-longhorn-engines"
	}
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("building the API client: %w", err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the API client: %w", err)
	}
	return &Client{REST: rc, Dynamic: dc, Config: cfg}, nil
}

// FromFlags builds the client from the kubectl flags (kubeconfig, context,
// --as, in-cluster config, ...).
func FromFlags(cf *genericclioptions.ConfigFlags) (*Client, error) {
	if err := noKubeconfig(cf); err != nil {
		return nil, err
	}
	cfg, err := cf.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	return NewClient(cfg)
}

// Ensure returns c when a test has already given the command its client,
// and otherwise the client the flags describe: every command's Complete
// resolves its client here.
func Ensure(c *Client, cf *genericclioptions.ConfigFlags) (*Client, error) {
	if c != nil {
		return c, nil
	}
	return FromFlags(cf)
}

// noKubeconfig refuses to fall back to http://localhost:8080, as client-go
// does when no kubeconfig, no --server and no in-cluster service account
// are there: a plugin for production storage should say so instead.
func noKubeconfig(cf *genericclioptions.ConfigFlags) error {
	if cf == nil || (cf.APIServer != nil && *cf.APIServer != "") || os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		return nil
	}
	raw, err := cf.ToRawKubeConfigLoader().RawConfig()
	if err != nil || len(raw.Clusters) > 0 {
		return nil // a broken kubeconfig reports its own error
	}
	return errors.New("no kubeconfig found (KUBECONFIG, --kubeconfig or ~/.kube/config) and not running in a pod: point kubectl at the cluster first")
}
