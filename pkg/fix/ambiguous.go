package fix

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// A write whose answer was lost (a timeout, a connection dropped after the
// request left) may or may not have happened. It is never sent again: the
// engine is read back instead, and the outcome is what that read shows.

// writeOutcome is what a read-back says about a write that failed.
type writeOutcome string

const (
	writeApplied    writeOutcome = "applied"     // the change is on the server
	writeNotApplied writeOutcome = "not-applied" // the engine is as before
	writeUnknown    writeOutcome = "unknown"     // the read-back failed too
)

// ambiguous tells a lost answer from a refusal: the server answered 4xx
// (other than a timeout), so it did not apply the write.
func ambiguous(err error) bool {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		// No answer at all: the connection dropped or the client gave
		// up. Anything else (a refusal before sending) sent nothing.
		var ue *url.Error
		return errors.As(err, &ue) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
			errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
	}
	switch code := int(st.Status().Code); {
	case code == http.StatusRequestTimeout, code == http.StatusGatewayTimeout, code >= 500:
		return true
	case code == 0:
		return true
	}
	return false
}

// readBack re-reads the engine after an ambiguous failure. It runs even when
// ctx is done (a signal, --request-timeout), with a bound of its own: the
// user must learn what happened.
func (r *Repairer) readBack(ctx context.Context, action detect.Action, e EngineRef) (writeOutcome, string) {
	u, err := r.readBackObject(ctx, longhorn.Engines, e.Name)
	gone := apierrors.IsNotFound(err) || (err == nil && string(u.GetUID()) != e.UID)
	switch {
	case gone && action == detect.ActionDelete:
		return writeApplied, "the engine is gone"
	case gone:
		return writeNotApplied, "the engine is gone (deleted by someone else); it was not deactivated by fix"
	case err != nil:
		return writeUnknown, "reading it back failed too: " + err.Error()
	}
	active, _, _ := unstructured.NestedBool(u.Object, "spec", "active")
	switch {
	case action == detect.ActionDelete && u.GetDeletionTimestamp() != nil:
		return writeApplied, "the engine is being deleted (deletionTimestamp set)"
	case action == detect.ActionDeactivate && !active:
		return writeApplied, "spec.active is now false (resourceVersion " + u.GetResourceVersion() + ")"
	}
	return writeNotApplied, "the engine is unchanged by fix (resourceVersion " + u.GetResourceVersion() + ")"
}

// readBackObject gets one object after a write whose answer was lost, for
// readBack and readBackReplica. It runs even when ctx is done (a signal,
// --request-timeout), with a bound of its own: the user must learn what
// happened. Errors other than NotFound are tried again a few times.
func (r *Repairer) readBackObject(ctx context.Context, res longhorn.Resource, name string) (*unstructured.Unstructured, error) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var u *unstructured.Unstructured
	err := retry.OnError(readBackBackoff, func(err error) bool {
		return !apierrors.IsNotFound(err) && rctx.Err() == nil
	}, func() (err error) {
		u, err = r.Client.Dynamic.Resource(res.GVR()).Namespace(r.Namespace).Get(rctx, name, metav1.GetOptions{})
		return err
	})
	return u, err
}

// readBackBackoff: five reads over about five seconds.
var readBackBackoff = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Steps: 5}
