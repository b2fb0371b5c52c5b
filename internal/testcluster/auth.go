package testcluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/rest"
)

// AdminUser is the user of RESTConfig and KubeconfigPath; it is in group
// system:masters and may do everything.
const AdminUser = "testcluster-admin"

// authState authenticates bearer tokens and authorizes requests with RBAC
// rule semantics evaluated in process: there is no RBAC API in this server,
// and delegating to a SubjectAccessReview endpoint would need one more server.
// It outlives API server restarts, so tokens stay valid across them.
type authState struct {
	mu     sync.RWMutex
	tokens map[string]string     // token -> user name
	users  map[string]*userEntry // user name -> entry
}

type userEntry struct {
	info  *user.DefaultInfo
	token string
	// namespace limits rules to one namespace, as a RoleBinding does;
	// "" applies them everywhere, as a ClusterRoleBinding does.
	namespace string
	rules     []rbacv1.PolicyRule
	admin     bool
}

func newAuthState() *authState {
	return &authState{tokens: map[string]string{}, users: map[string]*userEntry{}}
}

func newToken() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b)
}

func (a *authState) add(e *userEntry) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.users[e.info.Name]; ok {
		return fmt.Errorf("testcluster: user %q already exists", e.info.Name)
	}
	e.token = newToken()
	a.users[e.info.Name] = e
	a.tokens[e.token] = e.info.Name
	return nil
}

// AuthenticateToken implements authenticator.Token.
func (a *authState) AuthenticateToken(_ context.Context, token string) (*authenticator.Response, bool, error) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	name, ok := a.tokens[token]
	if !ok {
		return nil, false, nil
	}
	return &authenticator.Response{User: a.users[name].info}, true, nil
}

// Authorize implements authorizer.Authorizer. Members of system:masters (the
// server's own loopback client and AdminUser) may do everything; every
// authenticated user may read discovery, version, health and OpenAPI paths
// (what system:discovery and system:public-info-viewer grant in a real
// cluster); anything else needs a matching rule. No match means NoOpinion,
// which the server turns into its usual 403 Forbidden.
func (a *authState) Authorize(_ context.Context, attr authorizer.Attributes) (authorizer.Decision, string, error) {
	u := attr.GetUser()
	if u == nil {
		return authorizer.DecisionNoOpinion, "", nil
	}
	if slices.Contains(u.GetGroups(), user.SystemPrivilegedGroup) {
		return authorizer.DecisionAllow, "", nil
	}
	if !attr.IsResourceRequest() && attr.GetVerb() == "get" && publicPath(attr.GetPath()) &&
		slices.Contains(u.GetGroups(), user.AllAuthenticated) {
		return authorizer.DecisionAllow, "", nil
	}
	a.mu.RLock()
	e, ok := a.users[u.GetName()]
	a.mu.RUnlock()
	if !ok {
		return authorizer.DecisionNoOpinion, "", nil
	}
	if e.admin {
		return authorizer.DecisionAllow, "", nil
	}
	for i := range e.rules {
		if e.allows(&e.rules[i], attr) {
			return authorizer.DecisionAllow, "", nil
		}
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// ConditionsAwareAuthorize implements authorizer.Authorizer the way its
// documentation asks of an authorizer without conditions.
func (a *authState) ConditionsAwareAuthorize(ctx context.Context, attr authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(a.Authorize(ctx, attr))
}

// EvaluateConditions implements authorizer.Authorizer; there are no
// conditional decisions to evaluate.
func (a *authState) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

func publicPath(p string) bool {
	switch p {
	case "/api", "/apis", "/version", "/version/", "/healthz", "/livez", "/readyz", "/openapi":
		return true
	}
	return strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/apis/") || strings.HasPrefix(p, "/openapi/")
}

// allows applies one PolicyRule the way Kubernetes RBAC does.
func (e *userEntry) allows(r *rbacv1.PolicyRule, attr authorizer.Attributes) bool {
	if !matchesAny(r.Verbs, attr.GetVerb()) {
		return false
	}
	if !attr.IsResourceRequest() {
		// Like RBAC, non-resource rules only count when bound cluster-wide.
		if e.namespace != "" {
			return false
		}
		for _, u := range r.NonResourceURLs {
			if u == "*" || u == attr.GetPath() ||
				(strings.HasSuffix(u, "*") && strings.HasPrefix(attr.GetPath(), strings.TrimSuffix(u, "*"))) {
				return true
			}
		}
		return false
	}
	if e.namespace != "" && attr.GetNamespace() != e.namespace {
		return false
	}
	if !matchesAny(r.APIGroups, attr.GetAPIGroup()) {
		return false
	}
	if !resourceMatches(r.Resources, attr.GetResource(), attr.GetSubresource()) {
		return false
	}
	if len(r.ResourceNames) > 0 {
		return attr.GetName() != "" && slices.Contains(r.ResourceNames, attr.GetName())
	}
	return true
}

func matchesAny(list []string, v string) bool {
	return slices.Contains(list, "*") || slices.Contains(list, v)
}

// resourceMatches: "*" matches everything, "volumes" only the main resource,
// "volumes/status" that subresource, "*/status" any resource's status.
func resourceMatches(rules []string, resource, subresource string) bool {
	combined := resource
	if subresource != "" {
		combined += "/" + subresource
	}
	for _, r := range rules {
		if r == "*" || r == combined {
			return true
		}
		if subresource != "" && r == "*/"+subresource {
			return true
		}
	}
	return false
}

// AddUser adds a user, authenticated by a fresh bearer token, whose rules
// apply in the cluster's namespace only (as if bound by a RoleBinding there).
// It returns the path of a kubeconfig file for that user, with the same
// cluster and context name as KubeconfigPath. Requests outside the rules get
// the API server's real 403 Forbidden.
func (c *Cluster) AddUser(name string, rules []rbacv1.PolicyRule) (kubeconfigPath string, err error) {
	return c.addUser(name, c.namespace, rules)
}

// AddClusterUser is AddUser with the rules applying in every namespace and to
// cluster-scoped requests (as if bound by a ClusterRoleBinding).
func (c *Cluster) AddClusterUser(name string, rules []rbacv1.PolicyRule) (kubeconfigPath string, err error) {
	return c.addUser(name, "", rules)
}

func (c *Cluster) addUser(name, namespace string, rules []rbacv1.PolicyRule) (string, error) {
	if name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, "system:") {
		return "", fmt.Errorf("testcluster: invalid user name %q", name)
	}
	e := &userEntry{
		info:      &user.DefaultInfo{Name: name, Groups: []string{user.AllAuthenticated}},
		namespace: namespace,
		rules:     slices.Clone(rules),
	}
	if err := c.auth.add(e); err != nil {
		return "", err
	}
	path := filepath.Join(c.dir, "kubeconfig-"+name)
	if err := c.writeKubeconfig(path, name, e.token); err != nil {
		return "", err
	}
	return path, nil
}

// UserRESTConfig returns a client configuration for a user added with
// AddUser or AddClusterUser.
func (c *Cluster) UserRESTConfig(name string) (*rest.Config, error) {
	c.auth.mu.RLock()
	e, ok := c.auth.users[name]
	c.auth.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("testcluster: no user %q", name)
	}
	cfg := c.RESTConfig()
	cfg.BearerToken = e.token
	return cfg, nil
}
