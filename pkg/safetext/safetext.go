// Package safetext makes text that came from a cluster or a support bundle
// safe to print on a terminal: an object name, a workload name, a log line
// or a message can carry escape sequences that would set the terminal's
// title, clear its screen or hide what follows.
package safetext

import (
	"fmt"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with every rune a terminal could act on written as a Go
// escape (`\u001b` for ESC, `\n` for a newline, `\x9b` for a byte that is not
// UTF-8), so that a value stays on its line and in its column; in such a
// text a backslash is written as two, so that the escapes read one way. A
// Printable s, backslashes and all, is returned as it is.
func Escape(s string) string {
	if Printable(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i-1])
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	return b.String()
}

// Printable reports whether s is valid UTF-8 of printable runes and spaces
// only: nothing in it acts on a terminal.
func Printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// Cut is s cut to at most n bytes on a character boundary: a byte cut can
// split a character, which would then print as an escape of its first
// bytes.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Lines is Escape line by line: the line breaks of a message built here
// stay, what any line carries of elsewhere is escaped.
func Lines(s string) string {
	if Printable(strings.ReplaceAll(s, "\n", "")) {
		return s
	}
	ls := strings.Split(s, "\n")
	for i, l := range ls {
		ls[i] = Escape(l)
	}
	return strings.Join(ls, "\n")
}

// All escapes, in place, every string that ptr reaches through exported
// fields, pointers, slices, maps (keys too) and interfaces. Readers call it
// once on what they read, so that no printer has to remember to. Text that
// is already safe costs a read: nothing is copied.
func All(ptr any) {
	walker{keep: Printable, fix: Escape}.walk(reflect.ValueOf(ptr))
}

// NotPrintable lists the strings ptr reaches (as All walks) that are not
// Printable: after All, none.
func NotPrintable(ptr any) []string {
	var out []string
	walker{keep: Printable, fix: func(s string) string {
		out = append(out, s)
		return s
	}}.walk(reflect.ValueOf(ptr))
	return out
}

// walker gives every settable string that keep refuses to fix and stores
// what fix returns.
type walker struct {
	keep func(string) bool
	fix  func(string) string
}

func (w walker) walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			w.walk(v.Elem())
		}
	case reflect.Interface:
		if v.IsNil() || !v.CanSet() || w.clean(v.Elem()) {
			return
		}
		c := reflect.New(v.Elem().Type()).Elem()
		c.Set(v.Elem())
		w.walk(c)
		v.Set(c)
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				w.walk(f)
			}
		}
	case reflect.Slice, reflect.Array:
		if !holdsText(v.Type().Elem()) {
			return
		}
		for i := range v.Len() {
			w.walk(v.Index(i))
		}
	case reflect.Map:
		// map entries cannot be set in place: a map with anything to fix is
		// built anew, one without is left alone
		if !v.CanSet() || w.clean(v) {
			return
		}
		m := reflect.MakeMapWithSize(v.Type(), v.Len())
		it := v.MapRange()
		for it.Next() {
			k := reflect.New(v.Type().Key()).Elem()
			k.Set(it.Key())
			w.walk(k)
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			w.walk(e)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.String:
		if s := v.String(); v.CanSet() && !w.keep(s) {
			if t := w.fix(s); t != s {
				v.SetString(t)
			}
		}
	}
}

// clean: every string v reaches is one keep accepts (read only).
func (w walker) clean(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return v.IsNil() || w.clean(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && !w.clean(v.Field(i)) {
				return false
			}
		}
	case reflect.Slice, reflect.Array:
		if !holdsText(v.Type().Elem()) {
			return true
		}
		for i := range v.Len() {
			if !w.clean(v.Index(i)) {
				return false
			}
		}
	case reflect.Map:
		// labels, annotations and address maps, without reflect's copy of
		// every key and value
		if m, ok := v.Interface().(map[string]string); ok {
			for k, x := range m {
				if !w.keep(k) || !w.keep(x) {
					return false
				}
			}
			return true
		}
		it := v.MapRange()
		for it.Next() {
			if !w.clean(it.Key()) || !w.clean(it.Value()) {
				return false
			}
		}
	case reflect.String:
		return w.keep(v.String())
	}
	return true
}

// holdsText: values of t may reach a string (a []byte or a []int does not).
func holdsText(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Pointer, reflect.Interface, reflect.Struct, reflect.Slice, reflect.Array, reflect.Map:
		return true
	}
	return false
}

// OneLine puts a message of several lines on one, its lines trimmed and
// joined with "; ", for an error line or a log field that must stay one line.
func OneLine(s string) string {
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}
