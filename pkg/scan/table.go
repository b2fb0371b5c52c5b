package scan

import (
	"io"
	"strings"
	"unicode/utf8"
)

// table aligns columns on the plain text and colours afterwards, so escape
// codes never shift a column (text/tabwriter counts them as width). Given a
// width, it narrows the columns that allow it, in the order given by
// shrinkSteps, until the table fits; columns that may not shrink are never
// cut, so a table can still be wider than a very narrow terminal.
type table struct {
	cols []*column
	// steps say which column gives up width first; see fit.
	steps []shrinkStep
}

// column is one column: the header and every cell as plain text, and how
// to paint and to narrow them.
type column struct {
	header string
	cells  []string
	paints []func(string) string
	// shrink renders a cell in at most w runes; nil means the column is never cut.
	shrink func(cell string, w int) string
	width  int
	hidden bool
}

// shrinkStep narrows col to no less than min; below min it hides the
// column when drop is set, else stops at min.
type shrinkStep struct {
	col  int
	min  int
	drop bool
}

func (t *table) column(header string, shrink func(string, int) string) int {
	t.cols = append(t.cols, &column{header: header, shrink: shrink})
	return len(t.cols) - 1
}

// row appends one row; cells and paints line up with the columns.
func (t *table) row(cells []string, paints []func(string) string) {
	for i, c := range t.cols {
		c.cells = append(c.cells, cells[i])
		var p func(string) string
		if i < len(paints) {
			p = paints[i]
		}
		c.paints = append(c.paints, p)
	}
}

func runes(s string) int { return utf8.RuneCountInString(s) }

// fit sets each column's width for a terminal of width columns (0: no
// limit) and returns the gap between columns: kubectl's three spaces when
// everything fits, two when space is short.
func (t *table) fit(width int, headers bool) int {
	for _, c := range t.cols {
		c.width = 0
		if headers {
			c.width = runes(c.header)
		}
		for _, s := range c.cells {
			if n := runes(s); n > c.width {
				c.width = n
			}
		}
	}
	gap := 3
	if width <= 0 || t.total(gap) <= width {
		return gap
	}
	gap = 2
	for _, s := range t.steps {
		excess := t.total(gap) - width
		if excess <= 0 {
			break
		}
		c := t.cols[s.col]
		if c.hidden || c.shrink == nil {
			continue
		}
		target := c.width - excess
		switch {
		case target >= s.min:
			c.width = target
		case s.drop:
			c.hidden = true
		case s.min < c.width:
			c.width = s.min
		}
	}
	return gap
}

func (t *table) total(gap int) int {
	n, shown := 0, 0
	for _, c := range t.cols {
		if !c.hidden {
			n += c.width
			shown++
		}
	}
	if shown > 1 {
		n += gap * (shown - 1)
	}
	return n
}

func (t *table) write(w io.Writer, width int, headers bool) error {
	gap := t.fit(width, headers)
	var shown []*column
	for _, c := range t.cols {
		if !c.hidden {
			shown = append(shown, c)
		}
	}
	if len(shown) == 0 {
		return nil
	}
	var b strings.Builder
	line := func(cell func(c *column) (string, func(string) string)) {
		for i, c := range shown {
			s, paint := cell(c)
			if runes(s) > c.width && c.shrink != nil {
				s = c.shrink(s, c.width)
			}
			pad := c.width - runes(s)
			if paint != nil {
				s = paint(s)
			}
			b.WriteString(s)
			if i < len(shown)-1 {
				b.WriteString(strings.Repeat(" ", max(pad, 0)+gap))
			}
		}
		b.WriteByte('\n')
	}
	if headers {
		line(func(c *column) (string, func(string) string) { return c.header, nil })
	}
	for r := range shown[0].cells {
		line(func(c *column) (string, func(string) string) { return c.cells[r], c.paints[r] })
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// truncate cuts s to w runes, marking the cut with "…".
func truncate(s string, w int) string {
	if runes(s) <= w {
		return s
	}
	if w <= 1 {
		return "…"
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:w-1]), " ;,") + "…"
}

// shrinkEngines narrows "e-1cd53c57@harvester-node-2" (or a comma list of
// them) by cutting the node name, then by leaving the node out: the engine
// suffix is what `describe` and `fix` need, the node is in both.
func shrinkEngines(s string, w int) string {
	parts := strings.Split(s, ",")
	if len(parts) == 1 {
		at := strings.IndexByte(s, '@')
		if at < 0 {
			return truncate(s, w)
		}
		if w >= at+1+4 {
			return truncate(s, w)
		}
		return s[:at]
	}
	short := make([]string, len(parts))
	for i, p := range parts {
		if at := strings.IndexByte(p, '@'); at >= 0 {
			p = p[:at]
		}
		short[i] = p
	}
	return truncate(strings.Join(short, ","), max(w, runes(short[0])+1))
}

// engineMin is the narrowest an engine column gets: its longest suffix.
func engineMin(cells []string) int {
	n := 0
	for _, s := range cells {
		for _, p := range strings.Split(s, ",") {
			if at := strings.IndexByte(p, '@'); at >= 0 {
				p = p[:at]
			}
			if runes(p) > n {
				n = runes(p)
			}
		}
	}
	return n
}
