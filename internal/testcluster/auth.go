package testcluster

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"slices"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// AdminUser is the user of RESTConfig and KubeconfigPath; it is in group
// system:masters and may do everything.
const AdminUser = "testcluster-admin"

// authState knows one bearer token, the admin's, which outlives API server
// restarts. Tests of permissions run on Kubernetes' own API server and its
// RBAC authorizer (internal/kubeserver), not here.
type authState struct {
	token string
	info  *user.DefaultInfo
}

func newAuthState() *authState {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return &authState{
		token: hex.EncodeToString(b),
		info:  &user.DefaultInfo{Name: AdminUser, Groups: []string{user.SystemPrivilegedGroup, user.AllAuthenticated}},
	}
}

// AuthenticateToken implements authenticator.Token.
func (a *authState) AuthenticateToken(_ context.Context, token string) (*authenticator.Response, bool, error) {
	if subtle.ConstantTimeCompare([]byte(token), []byte(a.token)) != 1 {
		return nil, false, nil
	}
	return &authenticator.Response{User: a.info}, true, nil
}

// Authorize implements authorizer.Authorizer: members of system:masters
// (the server's own loopback client and AdminUser) may do everything, and
// nobody else anything.
func (a *authState) Authorize(_ context.Context, attr authorizer.Attributes) (authorizer.Decision, string, error) {
	if u := attr.GetUser(); u != nil && slices.Contains(u.GetGroups(), user.SystemPrivilegedGroup) {
		return authorizer.DecisionAllow, "", nil
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
