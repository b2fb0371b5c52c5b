package control

import (
	"io"
	"strings"
)

func newBody(s string) io.ReadCloser { return io.NopCloser(strings.NewReader(s)) }
