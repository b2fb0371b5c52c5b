package readstate

import (
	"bytes"
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
// every item into T, without what no command reads (slim: managedFields
// alone, a copy of the object's field names, would double the memory). A 410 Gone on
// an expired continue token restarts the list once from the beginning, as
// kubectl does not; a restart is safer than a partial view for a tool that
// decides what to delete.
//
// The next page is requested while the current one is decoded. Its continue
// token is taken from the raw bytes before decoding and checked against the
// decoded one; on a mismatch the early request is dropped and redone.
func ListAll[T any](ctx context.Context, c *Client, res longhorn.Resource, ns, selector string, pageSize int) ([]T, error) {
	if pageSize <= 0 {
		pageSize = DefaultPageSize
	}
	get := func(cont string) <-chan pageResult {
		ch := make(chan pageResult, 1)
		go func() {
			req := c.REST.Get().Namespace(ns).Resource(res.Plural).Param("limit", strconv.Itoa(pageSize))
			if cont != "" {
				req = req.Param("continue", cont)
			}
			if selector != "" {
				req = req.Param("labelSelector", selector)
			}
			raw, err := req.DoRaw(ctx)
			ch <- pageResult{raw, err, cont}
		}()
		return ch
	}
	var out []T
	in := interner{}
	restarted := false
	next := get("")
	for {
		p := <-next
		next = nil
		if p.err != nil {
			if p.cont != "" && !restarted && isExpired(p.err) {
				out, restarted = nil, true
				next = get("")
				continue
			}
			return nil, cmdutil.Explain(p.err, "list", res.GroupResource(), ns)
		}
		guess := continueToken(p.raw)
		if guess != "" {
			next = get(guess)
		}
		// The page is decoded straight into the spare room of out (json
		// appends to a slice's backing array), so its items are not copied.
		page := list[T]{Items: out[len(out):len(out):cap(out)]}
		if err := json.Unmarshal(p.raw, &page); err != nil {
			drain(next)
			return nil, fmt.Errorf("decoding %s: %w", res.GroupResource(), err)
		}
		p.raw = nil // the page's bytes are garbage from here on
		for i := range page.Items {
			slim(&page.Items[i], in)
		}
		switch {
		case len(out) == 0 && page.Metadata.RemainingItemCount != nil:
			// The first page says how many follow: one allocation for all.
			n := int64(len(page.Items)) + *page.Metadata.RemainingItemCount
			out = page.Items
			if n > int64(cap(out)) && n < 1<<24 {
				out = make([]T, len(page.Items), n)
				copy(out, page.Items)
			}
		case len(out) == 0:
			out = page.Items
		case extends(out, page.Items):
			out = out[:len(out)+len(page.Items)]
		default:
			out = append(out, page.Items...)
		}
		cont := page.Metadata.Continue
		if cont != guess {
			drain(next)
			next = nil
			if cont != "" {
				next = get(cont)
			}
		}
		if next == nil {
			return out, nil
		}
	}
}

// extends: items were decoded into the spare room of out, right after its
// elements.
func extends[T any](out, items []T) bool {
	return len(items) > 0 && cap(out) > len(out) && &out[:len(out)+1][len(out)] == &items[0]
}

type pageResult struct {
	raw  []byte
	err  error
	cont string // the token the page was asked for
}

// drain waits for an early request nobody needs, so none outlives ListAll.
func drain(ch <-chan pageResult) {
	if ch != nil {
		<-ch
	}
}

// continueToken finds metadata.continue in a LIST body without decoding it:
// the API server writes metadata after items, so it is the last
// "continue" key. A wrong guess costs one request, never a wrong result
// (ListAll compares it with the decoded token).
func continueToken(raw []byte) string {
	key := []byte(`"continue":"`)
	i := bytes.LastIndex(raw, key)
	if i < 0 {
		return ""
	}
	rest := raw[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 || bytes.IndexByte(rest[:j], '\\') >= 0 {
		return ""
	}
	return string(rest[:j])
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
