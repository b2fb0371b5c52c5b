package control

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
)

// Admit is for rest.Config.WrapTransport: it adds to every Engine and
// Replica the controllers create what Longhorn's mutating webhooks (1.4.3,
// 1.5.3 and 1.10.0 alike) add at admission: the longhornvolume label, which
// the datastore's per-volume listers select on, and the longhorn.io
// finalizer. The test API server runs no webhooks; without the label a new
// clone is invisible to the volume controller's next sync, which clones
// the same data directory again, something a cluster never sees.
func Admit(rt http.RoundTripper) http.RoundTripper { return admitter{next: rt} }

type admitter struct{ next http.RoundTripper }

func (a admitter) RoundTrip(req *http.Request) (*http.Response, error) {
	verb, resource, _, ok := describe(req)
	if !ok || verb != "create" || (resource != "engines" && resource != "replicas") || req.Body == nil {
		return a.next.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	if body, err = admit(body); err != nil {
		return nil, fmt.Errorf("admission stand-in: %s: %w", resource, err)
	}
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return a.next.RoundTrip(out)
}

// admit adds the label and the finalizer to one JSON-encoded object.
func admit(body []byte) ([]byte, error) {
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, err
	}
	meta, _ := raw["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		raw["metadata"] = meta
	}
	spec, _ := raw["spec"].(map[string]any)
	if vol, _ := spec["volumeName"].(string); vol != "" {
		labels, _ := meta["labels"].(map[string]any)
		if labels == nil {
			labels = map[string]any{}
		}
		labels["longhornvolume"] = vol
		meta["labels"] = labels
	}
	var finalizers []string
	if fs, ok := meta["finalizers"].([]any); ok {
		for _, f := range fs {
			if s, ok := f.(string); ok {
				finalizers = append(finalizers, s)
			}
		}
	}
	if !slices.Contains(finalizers, "longhorn.io") {
		finalizers = append(finalizers, "longhorn.io")
	}
	meta["finalizers"] = finalizers
	return json.Marshal(raw)
}
