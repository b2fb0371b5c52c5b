package readstate

import apierrors "k8s.io/apimachinery/pkg/api/errors"

func isExpired(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}
