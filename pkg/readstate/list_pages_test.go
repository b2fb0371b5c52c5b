package readstate

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// pagedReplicas serves n replicas in pages of limit, with or without
// metadata.remainingItemCount (an API server leaves it out for label
// selectors), and with a few snapshot-like extras that slim drops.
func pagedReplicas(t *testing.T, n int, remaining bool) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		start, _ := strconv.Atoi(r.URL.Query().Get("continue"))
		end := min(start+limit, n)
		var items []any
		for i := start; i < end; i++ {
			items = append(items, map[string]any{
				"metadata": map[string]any{"name": fmt.Sprintf("r-%03d", i), "namespace": "ns",
					"annotations": map[string]any{"a": "b"}, "labels": map[string]any{longhorn.VolumeLabel: "vol"}},
				"spec": map[string]any{"volumeName": "vol", "nodeID": "node-a"},
			})
		}
		meta := map[string]any{}
		if end < n {
			meta["continue"] = strconv.Itoa(end)
			if remaining {
				meta["remainingItemCount"] = n - end
			}
		}
		if err := json.NewEncoder(w).Encode(map[string]any{"metadata": meta, "items": items}); err != nil {
			t.Error(err)
		}
	}))
}

// Every page lands in the result once and in order, whether the slice is
// sized from remainingItemCount or grows page by page, and each item is
// slimmed.
func TestListAllPages(t *testing.T) {
	for _, remaining := range []bool{true, false} {
		for _, n := range []int{0, 1, 7, 8, 23} {
			srv := pagedReplicas(t, n, remaining)
			c, err := NewClient(&rest.Config{Host: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			got, err := ListAll[longhorn.Replica](context.Background(), c, longhorn.Replicas, "ns", "", 4)
			srv.Close()
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != n {
				t.Fatalf("remaining=%v n=%d: %d items", remaining, n, len(got))
			}
			for i, r := range got {
				if r.Name != fmt.Sprintf("r-%03d", i) || r.Spec.NodeID != "node-a" || longhorn.VolumeOf(&r) != "vol" {
					t.Fatalf("remaining=%v n=%d: item %d is %+v", remaining, n, i, r)
				}
				if r.Labels != nil {
					t.Fatalf("item %d not slimmed: %+v", i, r.ObjectMeta)
				}
			}
			if remaining && n > 0 && cap(got) != n {
				t.Errorf("n=%d: capacity %d, want the exact count", n, cap(got))
			}
		}
	}
}
