package kubeserver

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
)

var server *Server

func TestMain(m *testing.M) { Main(m, func(s *Server) { server = s }) }

// The server serves what testcluster cannot: core/v1, storage.k8s.io and
// Longhorn's CRDs side by side, as kubectl sees them.
func TestServesCoreStorageAndLonghorn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
		Spec:       corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "c", Image: "x"}}},
	}
	if _, err := server.Client().CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	vol := `{"apiVersion":"longhorn.io/v1beta2","kind":"Volume","metadata":{"name":"v1","namespace":"longhorn-system"},"spec":{"numberOfReplicas":3}}`
	cmd := exec.CommandContext(ctx, "kubectl", "--kubeconfig", server.KubeconfigPath(), "create", "-f", "-")
	cmd.Stdin = strings.NewReader(vol)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl create volume: %v\n%s", err, out)
	}
	out, err := exec.CommandContext(ctx, "kubectl", "--kubeconfig", server.KubeconfigPath(), "get",
		"pods", "-A", "-o", "name").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "pod/p") {
		t.Fatalf("kubectl get pods: %v\n%s", err, out)
	}
	out, err = exec.CommandContext(ctx, "kubectl", "--kubeconfig", server.KubeconfigPath(), "get",
		"volumeattachments.storage.k8s.io,volumes.longhorn.io", "-A", "-o", "name").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "volume.longhorn.io/v1") {
		t.Fatalf("kubectl get storage VAs and Longhorn volumes: %v\n%s", err, out)
	}
}

// A service account is authorized by the Role bound to it and nothing else.
func TestServiceAccountUnderRBAC(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := server.Client()
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "read-volumes", Namespace: Namespace},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"longhorn.io"}, Resources: []string{"volumes"}, Verbs: []string{"list"}}},
	}
	if _, err := c.RbacV1().Roles(Namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "read-volumes", Namespace: Namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "read-volumes"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "reader", Namespace: Namespace}},
	}
	if _, err := c.RbacV1().RoleBindings(Namespace).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kc, err := server.ServiceAccountKubeconfig(ctx, Namespace, "reader")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	sc := kubernetes.NewForConfigOrDie(cfg)
	_, err = sc.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("listing pods without a rule: want Forbidden, got %v", err)
	}
	// RBAC grants reach the authorizer through its informers: poll.
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err = sc.RESTClient().Get().AbsPath("/apis/longhorn.io/v1beta2/namespaces", Namespace, "volumes").DoRaw(ctx)
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("listing volumes with the Role: %v", err)
	}
}

// `make kube-apiserver` builds the file Binary builds, with the same
// flags: otherwise the first test process would build it again, over the
// one make made.
func TestMakefileBuildsWithBuildFlags(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testenv.ModuleRoot(), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	_, recipe, ok := strings.Cut(string(b), "\nkube-apiserver:\n")
	if !ok {
		t.Fatal("Makefile: no kube-apiserver target")
	}
	recipe, _, _ = strings.Cut(recipe, "\n")
	if want := "build -C test/kubeapiserver " + strings.Join(BuildFlags, " ") + " -o "; !strings.Contains(recipe, want) {
		t.Errorf("Makefile's kube-apiserver recipe %q does not build with %q (kubeserver.BuildFlags)", recipe, want)
	}
}
