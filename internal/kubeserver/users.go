package kubeserver

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// GuardServiceAccount is the ServiceAccount of deploy/rbac-guard.yaml, the
// one deploy/guard-job.yaml runs as.
const GuardServiceAccount = "longhorn-engines"

// GuardAccount applies deploy/rbac-guard.yaml with kubectl, as an operator
// does before deploy/guard-job.yaml, and returns a kubeconfig of its
// ServiceAccount once the Role grants it.
func (s *Server) GuardAccount(ctx context.Context) (string, error) {
	file := filepath.Join(testenv.ModuleRoot(), "deploy", "rbac-guard.yaml")
	if out, err := exec.CommandContext(ctx, "kubectl", "--kubeconfig", s.kubeconfig, "apply", "-f", file).CombinedOutput(); err != nil {
		return "", fmt.Errorf("kubeserver: kubectl apply -f deploy/rbac-guard.yaml: %v\n%s", err, out)
	}
	path, err := s.ServiceAccountKubeconfig(ctx, Namespace, GuardServiceAccount)
	if err != nil {
		return "", err
	}
	return path, s.waitAllowed(ctx, path, []authorizationv1.ResourceAttributes{
		{Namespace: Namespace, Group: longhorn.Group, Resource: longhorn.Volumes.Plural, Verb: "list"}})
}

// UserWithRole makes a service account name in longhorn-system bound to a
// Role of that name holding rules (in longhorn-system), and, when
// clusterRules is not empty, to a ClusterRole of that name holding those
// (cluster-wide), as an operator would apply docs/rbac.md. It returns the
// account's kubeconfig once the API server's RBAC authorizer grants the
// first rule (its caches follow the objects a moment later).
func (s *Server) UserWithRole(ctx context.Context, name string, rules, clusterRules []rbacv1.PolicyRule) (string, error) {
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: Namespace}}
	rbac := s.client.RbacV1()
	if len(rules) > 0 {
		if _, err := rbac.Roles(Namespace).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
			return "", fmt.Errorf("kubeserver: create role %s: %w", name, err)
		}
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}}
		if _, err := rbac.RoleBindings(Namespace).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
			return "", fmt.Errorf("kubeserver: create rolebinding %s: %w", name, err)
		}
	}
	if len(clusterRules) > 0 {
		if _, err := rbac.ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: clusterRules}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return "", fmt.Errorf("kubeserver: create clusterrole %s: %w", name, err)
		}
		crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}}
		if _, err := rbac.ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return "", fmt.Errorf("kubeserver: create clusterrolebinding %s: %w", name, err)
		}
	}
	path, err := s.ServiceAccountKubeconfig(ctx, Namespace, name)
	if err != nil {
		return "", err
	}
	var probes []authorizationv1.ResourceAttributes
	if a, ok := firstGrant(rules, Namespace); ok {
		probes = append(probes, a)
	}
	if a, ok := firstGrant(clusterRules, ""); ok {
		probes = append(probes, a)
	}
	return path, s.waitAllowed(ctx, path, probes)
}

func firstGrant(rules []rbacv1.PolicyRule, ns string) (authorizationv1.ResourceAttributes, bool) {
	for _, r := range rules {
		if len(r.APIGroups) > 0 && len(r.Resources) > 0 && len(r.Verbs) > 0 {
			return authorizationv1.ResourceAttributes{Namespace: ns, Group: r.APIGroups[0], Resource: r.Resources[0], Verb: r.Verbs[0]}, true
		}
	}
	return authorizationv1.ResourceAttributes{}, false
}

// waitAllowed asks, as the user, until every probe is allowed.
func (s *Server) waitAllowed(ctx context.Context, kubeconfig string, probes []authorizationv1.ResourceAttributes) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, p := range probes {
		var last string
		err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			r, err := c.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx,
				&authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &p}}, metav1.CreateOptions{})
			if err != nil {
				last = err.Error()
				return false, nil
			}
			last = r.Status.Reason
			return r.Status.Allowed, nil
		})
		if err != nil {
			return fmt.Errorf("kubeserver: %s %s.%s not granted yet (%s): %w", p.Verb, p.Resource, p.Group, last, err)
		}
	}
	return nil
}
