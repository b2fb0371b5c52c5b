package scan

import (
	"io"
	"strings"
	"unicode/utf8"
)

// table aligns columns on the plain text and colours afterwards, so escape
// codes never shift a column (text/tabwriter counts them as width).
type table struct {
	rows   [][]string
	paints [][]func(string) string
}

func (t *table) add(paint []func(string) string, cells ...string) {
	t.rows = append(t.rows, cells)
	t.paints = append(t.paints, paint)
}

func (t *table) write(w io.Writer) error {
	width := map[int]int{}
	for _, r := range t.rows {
		for i, c := range r {
			if n := utf8.RuneCountInString(c); n > width[i] {
				width[i] = n
			}
		}
	}
	var b strings.Builder
	for ri, r := range t.rows {
		for i, c := range r {
			cell := c
			if p := t.paints[ri]; p != nil && i < len(p) && p[i] != nil {
				cell = p[i](c)
			}
			b.WriteString(cell)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)+3))
			}
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}
