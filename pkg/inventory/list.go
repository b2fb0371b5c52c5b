package inventory

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// DefaultPageSize matches kubectl's --chunk-size.
const DefaultPageSize = 500

type list[T any] struct {
	Metadata metav1.ListMeta `json:"metadata"`
	Items    []T             `json:"items"`
}

// ListAll pages through a LIST of res in ns with limit/continue and decodes
// every item into T. A 410 Gone on an expired continue token restarts the
// list once from the beginning, as kubectl does not; a restart is safer than
// a partial view for a tool that decides what to delete.
func ListAll[T any](ctx context.Context, c *Client, res longhorn.Resource, ns, selector string, pageSize int) ([]T, error) {
	if pageSize <= 0 {
		pageSize = DefaultPageSize
	}
	var out []T
	cont := ""
	restarted := false
	for {
		req := c.REST.Get().Namespace(ns).Resource(res.Plural).Param("limit", strconv.Itoa(pageSize))
		if cont != "" {
			req = req.Param("continue", cont)
		}
		if selector != "" {
			req = req.Param("labelSelector", selector)
		}
		raw, err := req.DoRaw(ctx)
		if err != nil {
			if cont != "" && !restarted && isExpired(err) {
				out, cont, restarted = nil, "", true
				continue
			}
			return nil, cmdutil.Explain(err, "list", res.GroupResource(), ns)
		}
		var page list[T]
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", res.GroupResource(), err)
		}
		if out == nil {
			out = make([]T, 0, len(page.Items))
		}
		out = append(out, page.Items...)
		cont = page.Metadata.Continue
		if cont == "" {
			return out, nil
		}
	}
}

// Get reads one object into T.
func Get[T any](ctx context.Context, c *Client, res longhorn.Resource, ns, name string) (*T, error) {
	raw, err := c.REST.Get().Namespace(ns).Resource(res.Plural).Name(name).DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	var obj T
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("decoding %s %q: %w", res.GroupResource(), name, err)
	}
	return &obj, nil
}
