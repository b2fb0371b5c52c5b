package testcluster

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// TestRuleMatching checks the RBAC semantics of the in-process authorizer
// without a server; TestForbidden checks them through one.
func TestRuleMatching(t *testing.T) {
	a := newAuthState()
	ns := &userEntry{info: &user.DefaultInfo{Name: "ns", Groups: []string{user.AllAuthenticated}}, namespace: "longhorn-system", rules: []rbacv1.PolicyRule{
		{Verbs: []string{"get"}, APIGroups: []string{"longhorn.io"}, Resources: []string{"*/status"}},
		{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"settings"}, ResourceNames: []string{"a"}},
	}}
	cw := &userEntry{info: &user.DefaultInfo{Name: "cw", Groups: []string{user.AllAuthenticated}}, rules: []rbacv1.PolicyRule{
		{Verbs: []string{"get"}, NonResourceURLs: []string{"/metrics", "/debug/*"}},
	}}
	for _, e := range []*userEntry{ns, cw} {
		if err := a.add(e); err != nil {
			t.Fatal(err)
		}
	}
	res := func(u *userEntry, verb, ns, resource, sub, name string) authorizer.AttributesRecord {
		return authorizer.AttributesRecord{User: u.info, Verb: verb, Namespace: ns, APIGroup: "longhorn.io",
			Resource: resource, Subresource: sub, Name: name, ResourceRequest: true}
	}
	path := func(u *userEntry, p string) authorizer.AttributesRecord {
		return authorizer.AttributesRecord{User: u.info, Verb: "get", Path: p}
	}
	masters := authorizer.AttributesRecord{User: &user.DefaultInfo{Name: "x", Groups: []string{user.SystemPrivilegedGroup}}, Verb: "delete", ResourceRequest: true, Resource: "anything"}
	for _, tc := range []struct {
		name string
		attr authorizer.AttributesRecord
		want authorizer.Decision
	}{
		{"*/status get", res(ns, "get", "longhorn-system", "engines", "status", "e"), authorizer.DecisionAllow},
		{"*/status not main resource", res(ns, "get", "longhorn-system", "engines", "", "e"), authorizer.DecisionNoOpinion},
		{"*/status other verb", res(ns, "update", "longhorn-system", "engines", "status", "e"), authorizer.DecisionNoOpinion},
		{"other namespace", res(ns, "get", "default", "engines", "status", "e"), authorizer.DecisionNoOpinion},
		{"cluster scope from namespaced binding", res(ns, "get", "", "engines", "status", "e"), authorizer.DecisionNoOpinion},
		{"resourceNames match", res(ns, "delete", "longhorn-system", "settings", "", "a"), authorizer.DecisionAllow},
		{"resourceNames other", res(ns, "delete", "longhorn-system", "settings", "", "b"), authorizer.DecisionNoOpinion},
		{"resourceNames list", res(ns, "list", "longhorn-system", "settings", "", ""), authorizer.DecisionNoOpinion},
		{"discovery open", path(ns, "/apis/longhorn.io/v1beta2"), authorizer.DecisionAllow},
		{"nonResourceURL exact", path(cw, "/metrics"), authorizer.DecisionAllow},
		{"nonResourceURL prefix", path(cw, "/debug/pprof"), authorizer.DecisionAllow},
		{"nonResourceURL other", path(cw, "/logs"), authorizer.DecisionNoOpinion},
		{"nonResourceURL needs cluster binding", path(ns, "/metrics"), authorizer.DecisionNoOpinion},
		{"system:masters", masters, authorizer.DecisionAllow},
		{"unknown user", res(&userEntry{info: &user.DefaultInfo{Name: "nobody"}}, "get", "longhorn-system", "engines", "", "e"), authorizer.DecisionNoOpinion},
	} {
		got, _, err := a.Authorize(t.Context(), tc.attr)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %v (err %v), want %v", tc.name, got, err, tc.want)
		}
	}
	if resp, ok, _ := a.AuthenticateToken(t.Context(), ns.token); !ok || resp.User.GetName() != "ns" {
		t.Error("token of ns not recognised")
	}
	if _, ok, _ := a.AuthenticateToken(t.Context(), "bogus"); ok {
		t.Error("bogus token accepted")
	}
	if err := a.add(&userEntry{info: &user.DefaultInfo{Name: "ns"}}); err == nil {
		t.Error("duplicate user accepted")
	}
}
