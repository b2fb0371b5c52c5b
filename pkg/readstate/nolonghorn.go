package readstate

import (
	"context"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// noLonghornWhere is noLonghorn that also says where Longhorn is, when the
// user may list its version setting across namespaces: the usual mistake
// is a Longhorn installed outside longhorn-system.
func noLonghornWhere(ctx context.Context, c *Client, ns string) error {
	err := noLonghorn(ns)
	if c == nil || c.Dynamic == nil {
		return err
	}
	list, lerr := c.Dynamic.Resource(longhorn.Settings.GVR()).List(ctx, metav1.ListOptions{
		FieldSelector: "metadata.name=" + longhorn.VersionSetting, Limit: 20,
	})
	if lerr != nil || len(list.Items) == 0 {
		return err
	}
	var where []string
	for _, it := range list.Items {
		where = append(where, it.GetNamespace())
	}
	sort.Strings(where)
	return fmt.Errorf("no Longhorn found in namespace %q; Longhorn is installed in namespace %s: use -n %s",
		ns, strings.Join(where, ", "), where[0])
}
