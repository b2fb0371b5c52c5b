package readstate

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// zipBundle reads a bundle zip in place through its central directory:
// archive/zip decompresses an entry only while it is being read.
type zipBundle struct {
	names   []string
	entries map[string]*zip.File
	closer  io.Closer
	// unsafe counts entries skipped for a name that climbs out.
	unsafe int
}

func openZipBundle(ra io.ReaderAt, size int64, closer io.Closer) (*zipBundle, error) {
	zr, err := zip.NewReader(ra, size)
	if err != nil && !(errors.Is(err, zip.ErrInsecurePath) && zr != nil) {
		return nil, err
	}
	b := &zipBundle{entries: map[string]*zip.File{}, closer: closer}
	for _, f := range zr.File {
		n, ok := cleanEntryName(f.Name)
		if !ok {
			b.unsafe += unsafeName(f.Name)
			continue
		}
		if b.entries[n] != nil {
			continue
		}
		b.entries[n] = f
		b.names = append(b.names, n)
	}
	return b, nil
}

func (b *zipBundle) files() []string { return b.names }

func (b *zipBundle) open(name string) (io.ReadCloser, error) {
	f := b.entries[name]
	if f == nil {
		return nil, fmt.Errorf("%s: not in the zip", name)
	}
	return f.Open()
}

func (b *zipBundle) close() error {
	if b.closer != nil {
		return b.closer.Close()
	}
	return nil
}

// A zip that lost its end (an interrupted download or copy) has no central
// directory, and archive/zip refuses it whole. Its local file headers are
// still there, one before each entry's data, so the entries before the
// damage can be found by walking them from the start.

const (
	sigLocalHeader   = 0x04034b50
	sigCentralHeader = 0x02014b50
	sigDataDesc      = 0x08074b50
	flagDataDesc     = 0x8
	localHeaderLen   = 30
	maxSalvaged      = 1 << 20 // entries; a bundle has a few thousand
)

// salvagedEntry is where an entry's data lies.
type salvagedEntry struct {
	method   uint16
	dataOff  int64
	compSize int64
}

// salvagedBundle serves entries found by salvageZip.
type salvagedBundle struct {
	ra      io.ReaderAt
	names   []string
	entries map[string]salvagedEntry
	closer  io.Closer
	// damage says where and why the walk stopped.
	damage string
	unsafe int
}

// salvageZip walks local file headers from the start of the archive. An
// entry cut short by the damage is kept (its readable part still counts for a
// log); the walk stops there.
func salvageZip(ra io.ReaderAt, size int64, closer io.Closer) *salvagedBundle {
	b := &salvagedBundle{ra: ra, entries: map[string]salvagedEntry{}, closer: closer}
	var off int64
	for len(b.names) < maxSalvaged {
		var h [localHeaderLen]byte
		if _, err := ra.ReadAt(h[:], off); err != nil {
			b.damage = fmt.Sprintf("the archive ends at byte %d inside a file header", size)
			return b
		}
		switch binary.LittleEndian.Uint32(h[0:]) {
		case sigLocalHeader:
		case sigCentralHeader:
			return b // the entries are complete; only the directory's end is bad
		default:
			b.damage = fmt.Sprintf("no zip entry at byte %d", off)
			return b
		}
		flags := binary.LittleEndian.Uint16(h[6:])
		method := binary.LittleEndian.Uint16(h[8:])
		compSize := int64(binary.LittleEndian.Uint32(h[18:]))
		nameLen := int64(binary.LittleEndian.Uint16(h[26:]))
		extraLen := int64(binary.LittleEndian.Uint16(h[28:]))
		nameBuf := make([]byte, nameLen)
		if _, err := ra.ReadAt(nameBuf, off+localHeaderLen); err != nil {
			b.damage = fmt.Sprintf("the archive ends at byte %d inside a file header", size)
			return b
		}
		extra := make([]byte, extraLen)
		if _, err := ra.ReadAt(extra, off+localHeaderLen+nameLen); err != nil {
			b.damage = fmt.Sprintf("the archive ends at byte %d inside a file header", size)
			return b
		}
		if compSize == 0xFFFFFFFF {
			compSize = zip64CompSize(extra, compSize)
		}
		dataOff := off + localHeaderLen + nameLen + extraLen
		name := string(nameBuf)
		e := salvagedEntry{method: method, dataOff: dataOff, compSize: compSize}

		sizeKnown := flags&flagDataDesc == 0 || compSize > 0
		if !sizeKnown {
			if method != zip.Deflate {
				b.damage = fmt.Sprintf("%s: cannot find the end of a stored entry without its size", name)
				return b
			}
			n, err := deflatedLength(io.NewSectionReader(ra, dataOff, size-dataOff))
			e.compSize = n
			if err != nil {
				b.add(name, e)
				b.damage = fmt.Sprintf("%s is cut short (%v)", name, err)
				return b
			}
		}
		if e.compSize < 0 || dataOff+e.compSize > size {
			e.compSize = size - dataOff
			b.add(name, e)
			b.damage = fmt.Sprintf("%s is cut short", name)
			return b
		}
		b.add(name, e)
		off = dataOff + e.compSize
		if flags&flagDataDesc != 0 {
			off += dataDescLen(ra, off, e.compSize)
		}
	}
	return b
}

func (b *salvagedBundle) add(name string, e salvagedEntry) {
	n, ok := cleanEntryName(name)
	if !ok {
		b.unsafe += unsafeName(name)
		return
	}
	if _, dup := b.entries[n]; dup {
		return
	}
	b.entries[n] = e
	b.names = append(b.names, n)
}

// zip64CompSize reads the compressed size from a Zip64 extra field.
func zip64CompSize(extra []byte, fallback int64) int64 {
	for len(extra) >= 4 {
		tag := binary.LittleEndian.Uint16(extra[0:])
		n := int(binary.LittleEndian.Uint16(extra[2:]))
		if 4+n > len(extra) {
			break
		}
		if tag == 0x0001 && n >= 16 {
			// uncompressed size, then compressed size
			return int64(binary.LittleEndian.Uint64(extra[12:]))
		}
		extra = extra[4+n:]
	}
	return fallback
}

// dataDescLen measures the data descriptor after an entry: an optional
// signature, the CRC, then both sizes in 4 or (Zip64) 8 bytes.
func dataDescLen(ra io.ReaderAt, off, compSize int64) int64 {
	var d [24]byte
	n, _ := ra.ReadAt(d[:], off)
	buf := d[:n]
	start := int64(0)
	if len(buf) >= 4 && binary.LittleEndian.Uint32(buf) == sigDataDesc {
		start = 4
	}
	if int64(len(buf)) >= start+12 && int64(binary.LittleEndian.Uint32(buf[start+4:])) == compSize&0xFFFFFFFF {
		// a 32-bit size matches; Zip64 would put 8 bytes there
		if compSize < 0xFFFFFFFF {
			return start + 12
		}
	}
	return start + 20
}

// deflatedLength decompresses a raw deflate stream to find where it ends.
// flate reads through ReadByte when it can, so the count is exact.
func deflatedLength(r io.Reader) (int64, error) {
	cr := &countingByteReader{br: bufio.NewReaderSize(r, 32<<10)}
	fr := flate.NewReader(cr)
	_, err := io.Copy(io.Discard, fr)
	return cr.n, err
}

type countingByteReader struct {
	br *bufio.Reader
	n  int64
}

func (c *countingByteReader) Read(p []byte) (int, error) {
	n, err := c.br.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingByteReader) ReadByte() (byte, error) {
	b, err := c.br.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

func (b *salvagedBundle) files() []string { return b.names }

func (b *salvagedBundle) open(name string) (io.ReadCloser, error) {
	e, ok := b.entries[name]
	if !ok {
		return nil, fmt.Errorf("%s: not in the zip", name)
	}
	sr := io.NewSectionReader(b.ra, e.dataOff, e.compSize)
	switch e.method {
	case zip.Store:
		return io.NopCloser(sr), nil
	case zip.Deflate:
		return flate.NewReader(sr), nil
	}
	return nil, fmt.Errorf("%s: unsupported compression method %d", name, e.method)
}

func (b *salvagedBundle) close() error {
	if b.closer != nil {
		return b.closer.Close()
	}
	return nil
}

// damageOf says why a zip could only be read in part, "" when whole.
func damageOf(b bundleFS) string {
	if sb, ok := b.(*salvagedBundle); ok {
		return sb.damage
	}
	return ""
}

// unsafeNames counts the entries skipped because their name climbs out of
// the bundle. Nothing is ever extracted, so they are harmless, but the user
// should know they were not read.
func unsafeNames(b bundleFS) int {
	switch zb := b.(type) {
	case *zipBundle:
		return zb.unsafe
	case *salvagedBundle:
		return zb.unsafe
	}
	return 0
}

// unsafeName is 1 for a file entry whose name was refused, 0 for a folder.
func unsafeName(name string) int {
	if strings.HasSuffix(strings.ReplaceAll(name, `\`, "/"), "/") || name == "" {
		return 0
	}
	return 1
}
