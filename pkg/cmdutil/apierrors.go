package cmdutil

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/docs"
)

// Explain turns an API error for a request on resource (e.g.
// "volumes.longhorn.io") in namespace into one line a person can act on.
func Explain(err error, verb, resource, namespace string) error {
	if err == nil {
		return nil
	}
	var done *explained
	if errors.As(err, &done) {
		return err
	}
	return &explained{msg: explain(err, verb, resource, namespace), err: err}
}

// explained keeps the API error underneath the sentence, so callers can still
// ask apierrors.IsNotFound and friends.
type explained struct {
	msg string
	err error
}

func (e *explained) Error() string { return e.msg }
func (e *explained) Unwrap() error { return e.err }

func explain(err error, verb, resource, namespace string) string {
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Sprintf("forbidden: cannot %s %s in namespace %q: %s (see %s for the permissions each command needs)",
			verb, resource, namespace, reasonOf(err), docs.RBAC)
	case apierrors.IsUnauthorized(err):
		return fmt.Sprintf("unauthorized: the server rejected the credentials (%s)", reasonOf(err))
	case apierrors.IsNotFound(err) && isListLike(verb) && strings.HasSuffix(resource, ".longhorn.io"):
		return fmt.Sprintf("the server has no resource %s: Longhorn is not installed, or not at v1.3 or later (longhorn.io/v1beta2)", resource)
	case unreachable(err):
		return fmt.Sprintf("cannot reach the Kubernetes API server: %s", OneLine(err))
	}
	return fmt.Sprintf("%s %s: %s", verb, resource, OneLine(err))
}

func isListLike(verb string) bool { return verb == "list" || verb == "watch" }

func reasonOf(err error) string {
	var s apierrors.APIStatus
	if errors.As(err, &s) && s.Status().Message != "" {
		return OneLine(errors.New(s.Status().Message))
	}
	return OneLine(err)
}

func unreachable(err error) bool {
	var ue *url.Error
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &oe) || errors.Is(err, syscall.ECONNREFUSED) ||
		(errors.As(err, &ue) && errors.As(err, &ne)) ||
		strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "no such host")
}

// OneLine is err's message on one line, its runs of white space (a
// parser's or an API server's line breaks) made single spaces.
func OneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
