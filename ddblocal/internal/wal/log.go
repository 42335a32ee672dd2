package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
)

// The log file: a header (magic), then records. A record is a 16-byte
// frame, then its payload:
//
//	length  uint32  payload bytes
//	crc     uint32  CRC-32C of lsn and payload
//	lsn     uint64  the record's number, one more than the previous one's
//
// all little endian. Once every record is in the data file, the log is
// written again from its start (the file is reused, not truncated, and
// kept at a preallocated size, see grow): what follows the last record of
// the current run is either zeros or records of an earlier run, whose
// numbers are not the next one (numbers only grow: the data file keeps
// the last one applied).
const (
	logMagic    = "ddblocal log v1\n"
	headerSize  = len(logMagic)
	frameSize   = 16
	maxRecord   = 1 << 30
	lsnSentinel = 0
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrDamaged is returned (wrapped) when the log holds a damaged record
// that complete records follow: not the torn end a crash leaves.
var ErrDamaged = errors.New("the log is damaged")

// frame appends the frame and payload of record lsn to buf.
func frame(buf []byte, lsn uint64, payload []byte) []byte {
	// the header written in buf's room (a header array of its own
	// escapes to the heap through crc32)
	start := len(buf)
	buf = append(buf, make([]byte, frameSize)...)
	h := buf[start:]
	binary.LittleEndian.PutUint32(h[0:], uint32(len(payload)))
	binary.LittleEndian.PutUint64(h[8:], lsn)
	c := crc32.Update(0, castagnoli, h[8:16])
	c = crc32.Update(c, castagnoli, payload)
	binary.LittleEndian.PutUint32(h[4:], c)
	return append(buf, payload...)
}

// record is one complete record read from the log.
type record struct {
	lsn     uint64
	payload []byte
}

// readAt parses the record at off of data: ok false when there is none
// there (end of file, zeros, a torn or damaged record); next is where the
// following record would start when the frame's length is plausible (-1:
// it is not).
func readAt(data []byte, off int) (rec record, next int, ok bool) {
	if off+frameSize > len(data) {
		return record{}, -1, false
	}
	h := data[off : off+frameSize]
	n := int(binary.LittleEndian.Uint32(h[0:]))
	lsn := binary.LittleEndian.Uint64(h[8:])
	if n > maxRecord || off+frameSize+n > len(data) {
		return record{}, -1, false
	}
	next = off + frameSize + n
	if lsn == lsnSentinel {
		return record{}, next, false
	}
	p := data[off+frameSize : next]
	c := crc32.Update(0, castagnoli, h[8:16])
	c = crc32.Update(c, castagnoli, p)
	if c != binary.LittleEndian.Uint32(h[4:]) {
		return record{}, next, false
	}
	return record{lsn: lsn, payload: p}, next, true
}

// scan returns the records of the log's current run whose number is
// above applied, in order. It stops at the first place no record of the
// run follows: the torn end of a crash, zeros, or an earlier run. The
// current run starts with record applied+1 (the log starts over after
// every checkpoint) and only its last record can be torn (each append is
// synced before the next one starts), so when the record after the last
// good one (base+1) does not read but record base+2 is further on, the log
// is damaged: ErrDamaged. Records of earlier runs are all at or below
// applied.
func scan(data []byte, applied uint64) ([]record, error) {
	if len(data) < headerSize || string(data[:headerSize]) != logMagic {
		return nil, fmt.Errorf("%w: it does not start as a ddblocal log", ErrDamaged)
	}
	var out []record
	var prev uint64
	off := headerSize
	for {
		rec, next, ok := readAt(data, off)
		if !ok || (prev != 0 && rec.lsn != prev+1) {
			if !ok {
				base := max(prev, applied)
				if at := find(data, off+1, base+2); at >= 0 {
					return nil, fmt.Errorf("%w: the record at byte %d does not read (checksum or length) but record %d follows it at byte %d", ErrDamaged, off, base+2, at)
				}
			}
			return out, nil
		}
		if rec.lsn > applied {
			out = append(out, rec)
		}
		prev = rec.lsn
		off = next
	}
}

// find returns the offset of the first complete record numbered lsn at or
// after from (-1: none).
func find(data []byte, from int, lsn uint64) int {
	for at := from; at+frameSize <= len(data); at++ {
		if binary.LittleEndian.Uint64(data[at+8:]) != lsn {
			continue
		}
		if rec, _, ok := readAt(data, at); ok && rec.lsn == lsn {
			return at
		}
	}
	return -1
}

// readLog reads the log file at path, creating it (with its header,
// synced) when it does not exist.
func openLog(path string) (*os.File, []byte, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		if f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err != nil {
			return nil, nil, err
		}
		if _, err := f.Write([]byte(logMagic)); err != nil {
			_ = f.Close()
			return nil, nil, err
		}
		if err := f.Sync(); err != nil {
			_ = f.Close()
			return nil, nil, err
		}
		syncDir(path)
		return f, []byte(logMagic), nil
	}
	if err != nil {
		return nil, nil, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	return f, data, nil
}
