package readstate

import (
	"fmt"
	"io"
)

// Offline inputs come from users' machines and support tickets: a file that
// expands without end (a zip bomb, a runaway log) must stop at a limit, and
// that file then counts as not read completely.

// tooLargeError says a file went past the limit.
type tooLargeError struct{ limit int64 }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("expands beyond %d MiB, the limit for one file (a zip bomb?); not read further", e.limit>>20)
}

// capReader returns a tooLargeError once more than limit bytes come through.
type capReader struct {
	r     io.Reader
	left  int64
	limit int64
}

func newCapReader(r io.Reader, limit int64) *capReader {
	return &capReader{r: r, left: limit, limit: limit}
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var probe [1]byte
		n, err := c.r.Read(probe[:])
		if n > 0 {
			return 0, &tooLargeError{c.limit}
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

type capReadCloser struct {
	*capReader
	io.Closer
}

// openLimited opens a bundle file that may expand to limit bytes at most. A
// zip entry that declares more is refused before any of it is inflated.
func openLimited(b bundleFS, name string, limit int64) (io.ReadCloser, error) {
	if zb, ok := b.(*zipBundle); ok {
		if f := zb.entries[name]; f != nil && f.UncompressedSize64 > uint64(limit) {
			return nil, &tooLargeError{limit}
		}
	}
	rc, err := b.open(name)
	if err != nil {
		return nil, err
	}
	return capReadCloser{newCapReader(rc, limit), rc}, nil
}
