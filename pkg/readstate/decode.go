package readstate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
)

// maxProblems caps the parse problems kept per input; the count goes on.
const maxProblems = 5

// maxChunk bounds one YAML document or List entry held in memory (a real
// one is a few KiB; a List of 10,000 engines is cut into entries). Anything
// larger is skipped as a problem: a damaged or hostile file must not take
// the machine's memory.
var maxChunk = 256 << 20

// problems collects what could not be parsed in one input without stopping
// the read: the first few messages and the total.
type problems struct {
	total int
	first []string
}

func (p *problems) add(format string, args ...any) {
	p.total++
	if len(p.first) < maxProblems {
		p.first = append(p.first, fmt.Sprintf(format, args...))
	}
}

// summary is one line for the user, "" when nothing went wrong.
func (p *problems) summary() string {
	switch p.total {
	case 0:
		return ""
	case 1:
		return p.first[0]
	}
	return fmt.Sprintf("%d parts could not be read (first: %s)", p.total, p.first[0])
}

// decodeStream reads every object in r and hands each to emit, one at a
// time: single objects, Lists (kind: List or *List), top-level sequences (the
// Longhorn 1.3 bundle files), multi-document YAML and JSON streams such as
// `kubectl get -o json` or `-w -o json` output. List items are split off the
// text and decoded one by one, so a List of 10,000 engines never exists as one
// decoded tree, and a broken item costs that item only.
//
// Parse errors are collected in probs and the read goes on where the format
// allows (next YAML document or item). The returned error is a read error
// (I/O, truncated archive entry) or one from emit; it stops the read.
func decodeStream(r io.Reader, probs *problems, emit func(map[string]any) error) error {
	tr := &errTracker{r: r}
	br := bufio.NewReaderSize(tr, 64<<10)
	first, err := firstByte(br)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return err
	}
	if first == '{' || first == '[' {
		err := decodeJSONStream(br, probs, emit)
		var ee *emitError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &ee):
			return ee.err
		case tr.err != nil:
			return tr.err
		}
		// encoding/json cannot resynchronise after a syntax error: the
		// rest of this input is lost.
		probs.add("JSON does not parse: %v", err)
		return nil
	}
	s := yamlSplitter{br: br, probs: probs, emit: emit}
	return s.run()
}

// errTracker remembers a read error, so a truncated archive entry is told
// apart from JSON that ends too early (both surface as errors of the decoder).
type errTracker struct {
	r   io.Reader
	err error
}

func (t *errTracker) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		t.err = err
	}
	return n, err
}

// firstByte peeks the first byte that is not white space or a UTF-8 BOM.
func firstByte(br *bufio.Reader) (byte, error) {
	if b, err := br.Peek(3); err == nil && bytes.Equal(b, []byte{0xEF, 0xBB, 0xBF}) {
		_, _ = br.Discard(3)
	}
	for {
		b, err := br.Peek(1)
		if err != nil {
			return 0, err
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			_, _ = br.Discard(1)
			continue
		}
		return b[0], nil
	}
}

// emitObject hands obj to emit, or each of its items when it is a List that
// was decoded whole (a List inside a JSON array, a small YAML document).
func emitObject(v any, where string, probs *problems, emit func(map[string]any) error) error {
	m, ok := v.(map[string]any)
	if !ok {
		if v != nil {
			probs.add("%s: not an object (%T)", where, v)
		}
		return nil
	}
	if items, ok := m["items"].([]any); ok && isListKind(m) {
		for i, it := range items {
			if err := emitObject(it, fmt.Sprintf("%s item %d", where, i+1), probs, emit); err != nil {
				return err
			}
		}
		return nil
	}
	return emit(m)
}

func isListKind(m map[string]any) bool {
	k, _ := m["kind"].(string)
	return k == "" || strings.HasSuffix(k, "List")
}

// decodeJSONStream reads concatenated JSON values. The items of a top-level
// List object are decoded one at a time.
func decodeJSONStream(br *bufio.Reader, probs *problems, emit func(map[string]any) error) error {
	dec := json.NewDecoder(br)
	dec.UseNumber()
	for n := 1; ; n++ {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		where := fmt.Sprintf("JSON value %d", n)
		switch tok {
		case json.Delim('{'):
			err = decodeJSONObject(dec, where, probs, emit)
		case json.Delim('['):
			err = decodeJSONArray(dec, where, probs, emit)
		default:
			probs.add("%s: not an object", where)
		}
		if err != nil {
			return err
		}
	}
}

// emitError carries an error returned by emit through the JSON walk, so it
// is not mistaken for a parse error.
type emitError struct{ err error }

func (e *emitError) Error() string { return e.err.Error() }
func (e *emitError) Unwrap() error { return e.err }

func decodeJSONObject(dec *json.Decoder, where string, probs *problems, emit func(map[string]any) error) error {
	m := map[string]any{}
	streamed := false
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := kt.(string)
		if key != "items" {
			var v any
			if err := dec.Decode(&v); err != nil {
				return err
			}
			m[key] = v
			continue
		}
		vt, err := dec.Token()
		if err != nil {
			return err
		}
		if vt != json.Delim('[') {
			v, err := jsonValueFrom(dec, vt)
			if err != nil {
				return err
			}
			m[key] = v
			continue
		}
		// A List's items stream out one by one, as a top-level array's do.
		streamed = true
		if err := decodeJSONArray(dec, where, probs, emit); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // }
		return err
	}
	if streamed {
		return nil
	}
	if err := emitObject(m, where, probs, emit); err != nil {
		return &emitError{err}
	}
	return nil
}

func decodeJSONArray(dec *json.Decoder, where string, probs *problems, emit func(map[string]any) error) error {
	for i := 1; dec.More(); i++ {
		var v any
		if err := dec.Decode(&v); err != nil {
			return err
		}
		if err := emitObject(v, fmt.Sprintf("%s item %d", where, i), probs, emit); err != nil {
			return &emitError{err}
		}
	}
	_, err := dec.Token() // ]
	return err
}

// jsonValueFrom finishes decoding a value whose first token was already read.
func jsonValueFrom(dec *json.Decoder, tok json.Token) (any, error) {
	switch tok {
	case json.Delim('{'):
		m := map[string]any{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			var v any
			if err := dec.Decode(&v); err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			m[k] = v
		}
		_, err := dec.Token()
		return m, err
	case json.Delim('['):
		var out []any
		for dec.More() {
			var v any
			if err := dec.Decode(&v); err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		_, err := dec.Token()
		return out, err
	}
	return tok, nil
}

// yamlSplitter reads YAML line by line. A document is decoded whole unless it
// is a List in block style (a column-0 "items:" followed by "- " entries) or a
// top-level block sequence: then each entry is cut out of the text and
// decoded on its own. That is the shape both support-bundle-kit and
// `kubectl get -o yaml` write, and what keeps memory bounded by one object.
type yamlSplitter struct {
	br    *bufio.Reader
	probs *problems
	emit  func(map[string]any) error

	doc        int          // current document, 1-based
	mode       splitMode    // how the current document is being read
	buf        bytes.Buffer // the document (modeDoc) or the current item (modeItems)
	content    bool         // the document has had a content line
	awaitItems bool         // saw "items:", waiting for its first entry
	indent     int          // column of the "-" of the entries
	item       int          // current entry, 1-based
	skipping   bool         // the current document or entry is too large
	// listOpen: the entries came from an "items:" key. kubectl and
	// support-bundle-kit write the List's kind and metadata after its
	// items, so a List that ends without them was cut short.
	listOpen bool
}

type splitMode int

const (
	modeDoc   splitMode = iota // buffering a whole document
	modeItems                  // cutting entries of a block sequence
	modeTail                   // entries done; skip the rest of the document
)

func (s *yamlSplitter) run() error {
	s.doc = 1
	for {
		line, err := readBoundedLine(s.br, maxChunk+1)
		if len(line) > 0 {
			if ferr := s.line(line); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			if s.mode == modeItems && s.listOpen {
				s.probs.add("document %d: the List ends inside item %d, without the kind and metadata that follow its items: the file is cut short", s.doc, s.item)
			}
			return s.flushDoc()
		}
		if err != nil {
			return err
		}
	}
}

func (s *yamlSplitter) line(line []byte) error {
	if rest, ok := docSeparator(line); ok {
		if err := s.flushDoc(); err != nil {
			return err
		}
		s.doc++
		if len(bytes.TrimSpace(rest)) > 0 {
			return s.line(rest)
		}
		return nil
	}
	if isDocEnd(line) {
		if err := s.flushDoc(); err != nil {
			return err
		}
		s.doc++
		return nil
	}
	blank := isBlankOrComment(line)
	defer s.checkSize()
	switch s.mode {
	case modeTail:
		return nil
	case modeItems:
		if blank {
			s.appendItemLine(line)
			return nil
		}
		ind := indentOf(line)
		switch {
		case ind == s.indent && isEntryStart(line, ind):
			if err := s.flushItem(); err != nil {
				return err
			}
			s.item++
			s.skipping = false
			s.appendItemLine(line)
		case ind > s.indent:
			s.appendItemLine(line)
		default:
			if err := s.flushItem(); err != nil {
				return err
			}
			s.mode = modeTail
		}
		return nil
	}
	// modeDoc
	if s.skipping {
		return nil
	}
	if blank || line[0] == '%' {
		if s.content || line[0] != '%' {
			s.buf.Write(line)
		}
		return nil
	}
	ind := indentOf(line)
	if s.awaitItems {
		s.awaitItems = false
		if isEntryStart(line, ind) {
			s.startItems(ind, line)
			s.listOpen = true
			return nil
		}
	}
	if !s.content && ind == 0 && isEntryStart(line, 0) {
		s.content = true
		s.startItems(0, line)
		return nil
	}
	s.content = true
	if ind == 0 && isItemsKey(line) {
		s.awaitItems = true
	}
	s.buf.Write(line)
	return nil
}

// checkSize drops a document or entry that grew past maxChunk; the rest of
// it is skipped up to the next entry or document.
func (s *yamlSplitter) checkSize() {
	if s.buf.Len() <= maxChunk {
		return
	}
	where := fmt.Sprintf("document %d", s.doc)
	if s.mode == modeItems {
		where += fmt.Sprintf(" item %d", s.item)
	}
	s.probs.add("%s: larger than %d MiB, skipped", where, maxChunk>>20)
	s.buf.Reset()
	s.skipping = true
}

func (s *yamlSplitter) startItems(indent int, line []byte) {
	s.mode, s.indent, s.item = modeItems, indent, 1
	s.buf.Reset()
	s.appendItemLine(line)
}

// appendItemLine keeps the entry's lines shifted left by the sequence's
// indentation, so each entry parses as a one-element sequence.
func (s *yamlSplitter) appendItemLine(line []byte) {
	if s.skipping {
		return
	}
	n := 0
	for n < s.indent && n < len(line) && line[n] == ' ' {
		n++
	}
	s.buf.Write(line[n:])
}

func (s *yamlSplitter) flushItem() error {
	defer s.buf.Reset()
	if s.buf.Len() == 0 || s.skipping {
		return nil
	}
	where := fmt.Sprintf("document %d item %d", s.doc, s.item)
	v, err := yamlToAny(s.buf.Bytes())
	if err != nil {
		s.probs.add("%s: YAML does not parse: %v", where, cmdutil.OneLine(err))
		return nil
	}
	seq, ok := v.([]any)
	if !ok || len(seq) != 1 {
		s.probs.add("%s: not a list entry", where)
		return nil
	}
	return emitObject(seq[0], where, s.probs, s.emit)
}

func (s *yamlSplitter) flushDoc() error {
	var err error
	switch s.mode {
	case modeItems:
		err = s.flushItem()
	case modeDoc:
		if s.content && !s.skipping {
			err = s.decodeDoc()
		}
	}
	s.buf.Reset()
	s.mode, s.content, s.awaitItems, s.item, s.skipping, s.listOpen = modeDoc, false, false, 0, false, false
	return err
}

func (s *yamlSplitter) decodeDoc() error {
	where := fmt.Sprintf("document %d", s.doc)
	v, err := yamlToAny(s.buf.Bytes())
	if err != nil {
		s.probs.add("%s: YAML does not parse: %v", where, cmdutil.OneLine(err))
		return nil
	}
	if seq, ok := v.([]any); ok {
		for i, e := range seq {
			if err := emitObject(e, fmt.Sprintf("%s item %d", where, i+1), s.probs, s.emit); err != nil {
				return err
			}
		}
		return nil
	}
	return emitObject(v, where, s.probs, s.emit)
}

// yamlToAny converts YAML the way kubectl does (YAML 1.1 scalars, as the
// bundle writer and kubectl produce) and keeps integers exact.
func yamlToAny(doc []byte) (any, error) {
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func docSeparator(line []byte) (rest []byte, ok bool) {
	if !bytes.HasPrefix(line, []byte("---")) {
		return nil, false
	}
	rest = line[3:]
	if len(rest) > 0 && rest[0] != ' ' && rest[0] != '\t' && rest[0] != '\r' && rest[0] != '\n' {
		return nil, false
	}
	t := bytes.TrimSpace(rest)
	if len(t) > 0 && t[0] == '#' {
		return nil, true
	}
	return rest, true
}

func isDocEnd(line []byte) bool {
	return bytes.Equal(bytes.TrimRight(line, " \t\r\n"), []byte("..."))
}

func isBlankOrComment(line []byte) bool {
	t := bytes.TrimLeft(line, " \t")
	return len(t) == 0 || t[0] == '#' || t[0] == '\n' || t[0] == '\r'
}

func indentOf(line []byte) int {
	n := 0
	for n < len(line) && line[n] == ' ' {
		n++
	}
	return n
}

// isEntryStart: a block sequence entry, "-" then a space or the line end.
func isEntryStart(line []byte, ind int) bool {
	if ind >= len(line) || line[ind] != '-' {
		return false
	}
	if ind+1 == len(line) {
		return true
	}
	switch line[ind+1] {
	case ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

// isItemsKey matches "items:" alone on its line (a block List follows).
func isItemsKey(line []byte) bool {
	t := bytes.TrimRight(line, " \t\r\n")
	if !bytes.HasPrefix(t, []byte("items:")) {
		return false
	}
	rest := bytes.TrimSpace(t[len("items:"):])
	return len(rest) == 0 || rest[0] == '#'
}
