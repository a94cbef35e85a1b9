package profiles

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
)

// pbScan walks a pprof protobuf as a stream, keeping nothing of it but
// counts, ids and a few indices, and refuses what profile.ParseData would
// refuse once parsed: it follows pprof's decoder field by field (the same
// wire types, unknown fields skipped, the last value of a scalar winning)
// and then applies the checks of its postDecode and CheckValid (string
// indices in range, the first string empty, sample values matching the
// sample types, ids unique and not zero, every referenced location and
// function present) plus kbench's own: at least one sample type, and
// sample values whose totals stay within int64. It is stricter than pprof
// in one way that no encoder trips: field number 0, which protobuf
// forbids, is refused at once rather than skipped, so zeros are known for
// what they are at the first byte.
//
// Along the way it estimates the memory pprof would allocate to parse the
// stream and kbench to re-encode it (see pbCost), and stops with
// ErrTooLarge once that passes the budget. A stream it accepts parses.
type pbScan struct {
	r      *bufio.Reader
	off    int64 // bytes read
	budget int64
	cost   int64 // estimated bytes of the parsed profile, see pbCost

	strs         int64 // string_table entries
	sampleTypes  int64
	samples      int64
	values       int64 // values per sample, of the first sample
	sums         valueSums
	timeNanos    uint64
	top          [5]int64 // last drop_frames, keep_frames, default_sample_type, doc_url, period_type.type
	periodUnit   int64
	maxStr       int64 // largest string index pprof checks, -1 for none
	locIDs       []uint64
	funcIDs      []uint64
	mapIDs       []uint64
	locRefs      refRange
	funcRefs     refRange
	needRefsPass bool // ids are sparse: references are checked in a second pass
}

// refRange is the smallest and largest id referenced.
type refRange struct {
	n        int64
	min, max uint64
}

func (rr *refRange) add(id uint64) {
	if rr.n == 0 || id < rr.min {
		rr.min = id
	}
	if rr.n == 0 || id > rr.max {
		rr.max = id
	}
	rr.n++
}

// pbError is a reason the stream is not a profile pprof would accept.
type pbError struct {
	off int64
	msg string
}

func (e *pbError) Error() string { return fmt.Sprintf("pprof: %s (at byte %d)", e.msg, e.off) }

// Is makes errors.Is(err, ErrNotProfile) true.
func (e *pbError) Is(target error) bool { return target == ErrNotProfile }

// What a parsed element costs in memory, in bytes: its struct (rounded up
// to Go's size classes), its share of the slices and maps pprof's
// postDecode and CheckValid build over it, and what re-encoding it takes.
// TestUploadCostCovers measures them against real allocations.
const (
	pbCostBase      = 2 << 20 // the gzip writer of the re-encoding, buffers
	pbCostPerByte   = 3       // the stream held in memory, then re-encoded (a growing buffer)
	pbCostValueType = 96
	pbCostSample    = 224
	pbCostLocRef    = 80 // per location id of a sample: the ids, then the pointers (48), and checkShape's map (32)
	pbCostValue     = 32
	pbCostLabel     = 560
	pbCostMapping   = 400
	pbCostLocation  = 288
	pbCostLine      = 112
	pbCostFunction  = 272
	pbCostString    = 480 // plus 6 times its length: copies, the re-encoding's table and buffers
	pbCostComment   = 40
)

func newPBScan(r *bufio.Reader, budget int64) *pbScan {
	return &pbScan{r: r, budget: budget, maxStr: -1, cost: pbCostBase}
}

func (s *pbScan) fail(format string, args ...any) error {
	return &pbError{off: s.off, msg: fmt.Sprintf(format, args...)}
}

// spend adds n to the estimate, failing past the budget.
func (s *pbScan) spend(n int64) error {
	s.cost += n
	if s.cost+pbCostPerByte*s.off > s.budget {
		return fmt.Errorf("%w: loading it would take more than %d MiB of memory (the limit); it is %d MiB in, with %d samples so far",
			ErrTooLarge, s.budget>>20, s.off>>20, s.samples)
	}
	return nil
}

// str notes a string index pprof resolves.
func (s *pbScan) str(i int64) error {
	if i < 0 {
		return s.fail("string index %d is negative", i)
	}
	s.maxStr = max(s.maxStr, i)
	return nil
}

// readByte reads one byte of a message with *left bytes to go (left < 0:
// the top-level message, which ends with the stream).
func (s *pbScan) readByte(left *int64) (byte, error) {
	if *left == 0 {
		return 0, s.fail("bad varint: it runs past the end of its message")
	}
	b, err := s.r.ReadByte()
	if err != nil {
		if err == io.EOF {
			return 0, s.fail("truncated: the stream ends inside a field")
		}
		return 0, err
	}
	s.off++
	if *left > 0 {
		*left--
	}
	return b, nil
}

// varint reads a varint as pprof's decodeVarint does: at most 10 bytes,
// high bits past 64 dropped.
func (s *pbScan) varint(left *int64) (uint64, error) {
	var u uint64
	for i := 0; ; i++ {
		if i >= 10 {
			return 0, s.fail("bad varint: longer than 10 bytes")
		}
		b, err := s.readByte(left)
		if err != nil {
			return 0, err
		}
		u |= uint64(b&0x7f) << uint(7*i)
		if b&0x80 == 0 {
			return u, nil
		}
	}
}

// skip discards n bytes of a field's value.
func (s *pbScan) skip(n int64) error {
	for n > 0 {
		step := int(min(n, 1<<20))
		got, err := s.r.Discard(step)
		s.off += int64(got)
		n -= int64(got)
		if err != nil {
			if err == io.EOF {
				return s.fail("truncated: the stream ends inside a field")
			}
			return err
		}
	}
	return nil
}

// field is one field's key and, but for length-delimited ones, its value.
type field struct {
	num uint64
	typ int
	u64 uint64 // wire types 0, 1 and 5
	n   int64  // wire type 2: the length, still to be read
}

// next reads a field's key and scalar value. At the top level (left < 0)
// a clean end of stream between fields is io.EOF.
func (s *pbScan) next(left *int64) (field, error) {
	if *left < 0 {
		if _, err := s.r.Peek(1); err == io.EOF {
			return field{}, io.EOF
		}
	}
	key, err := s.varint(left)
	if err != nil {
		return field{}, err
	}
	f := field{num: key >> 3, typ: int(key & 7)}
	if f.num == 0 {
		return f, s.fail("field number 0: this is not a protobuf")
	}
	switch f.typ {
	case 0:
		f.u64, err = s.varint(left)
	case 1, 5:
		size := int64(8)
		if f.typ == 5 {
			size = 4
		}
		if *left >= 0 && *left < size {
			return f, s.fail("not enough data for a fixed-size field")
		}
		var buf [8]byte
		for i := int64(0); i < size && err == nil; i++ {
			buf[i], err = s.readByte(left)
		}
	case 2:
		var n uint64
		if n, err = s.varint(left); err != nil {
			return f, err
		}
		if n > math.MaxInt64 || (*left >= 0 && int64(n) > *left) {
			return f, s.fail("too much data: a field of %d bytes runs past the end of its message", n)
		}
		f.n = int64(n)
		if *left > 0 {
			*left -= f.n
		}
	default:
		return f, s.fail("unknown wire type %d", f.typ)
	}
	return f, err
}

// want checks a known field's wire type.
func (s *pbScan) want(f field, typ int) error {
	if f.typ != typ {
		return s.fail("type mismatch: field %d has wire type %d, want %d", f.num, f.typ, typ)
	}
	return nil
}

// unknown skips a field pprof does not know.
func (s *pbScan) unknown(f field) error {
	if f.typ == 2 {
		return s.skip(f.n)
	}
	return nil
}

// repeated reads a repeated integer field, packed or not, calling fn for
// each value.
func (s *pbScan) repeated(f field, fn func(uint64) error) error {
	if f.typ != 2 {
		if err := s.want(f, 0); err != nil {
			return err
		}
		return fn(f.u64)
	}
	left := f.n
	for left > 0 {
		u, err := s.varint(&left)
		if err != nil {
			return err
		}
		if err := fn(u); err != nil {
			return err
		}
	}
	return nil
}

// walk reads the whole stream as a Profile message.
func (s *pbScan) walk() error {
	left := int64(-1)
	for {
		f, err := s.next(&left)
		if err == io.EOF {
			return s.end()
		}
		if err != nil {
			return err
		}
		switch f.num {
		case 1: // sample_type
			if err := s.want(f, 2); err != nil {
				return err
			}
			if s.sampleTypes == MaxSampleTypes {
				return fmt.Errorf("%w: more than %d sample types (the limit)", ErrTooLarge, MaxSampleTypes)
			}
			t, u, err := s.valueType(f.n)
			if err != nil {
				return err
			}
			if err := s.str(t); err != nil {
				return err
			}
			if err := s.str(u); err != nil {
				return err
			}
			s.sampleTypes++
			if err := s.spend(pbCostValueType); err != nil {
				return err
			}
		case 2:
			err = s.sample(f)
		case 3:
			err = s.mapping(f)
		case 4:
			err = s.location(f)
		case 5:
			err = s.function(f)
		case 6: // string_table
			if err := s.want(f, 2); err != nil {
				return err
			}
			if s.strs == 0 && f.n != 0 {
				return s.fail("string_table[0] must be ''")
			}
			s.strs++
			if err := s.spend(pbCostString + 6*f.n); err != nil {
				return err
			}
			err = s.skip(f.n)
		case 7, 8, 14, 15: // drop_frames, keep_frames, default_sample_type, doc_url
			if err := s.want(f, 0); err != nil {
				return err
			}
			s.top[topIndex(f.num)] = int64(f.u64)
		case 9: // time_nanos: a second one means concatenated profiles
			if s.timeNanos != 0 {
				return s.fail("concatenated profiles")
			}
			if err := s.want(f, 0); err != nil {
				return err
			}
			s.timeNanos = f.u64
		case 10, 12: // duration_nanos, period
			err = s.want(f, 0)
		case 11: // period_type: the last one counts
			if err := s.want(f, 2); err != nil {
				return err
			}
			s.top[4], s.periodUnit, err = s.valueType(f.n)
			if err == nil {
				err = s.spend(pbCostValueType)
			}
		case 13: // comment
			err = s.repeated(f, func(u uint64) error {
				if err := s.str(int64(u)); err != nil {
					return err
				}
				return s.spend(pbCostComment)
			})
		default:
			err = s.unknown(f)
		}
		if err != nil {
			return err
		}
	}
}

// topIndex is where top holds the string index of a top-level field.
func topIndex(num uint64) int {
	switch num {
	case 7:
		return 0
	case 8:
		return 1
	case 14:
		return 2
	}
	return 3
}

// valueType reads a ValueType message: its type and unit string indices.
func (s *pbScan) valueType(n int64) (typ, unit int64, err error) {
	left := n
	for left > 0 {
		f, err := s.next(&left)
		if err != nil {
			return 0, 0, err
		}
		switch f.num {
		case 1, 2:
			if err := s.want(f, 0); err != nil {
				return 0, 0, err
			}
			if f.num == 1 {
				typ = int64(f.u64)
			} else {
				unit = int64(f.u64)
			}
		default:
			if err := s.unknown(f); err != nil {
				return 0, 0, err
			}
		}
	}
	return typ, unit, nil
}

func (s *pbScan) sample(f field) error {
	if err := s.want(f, 2); err != nil {
		return err
	}
	left := f.n
	var nvalues, nlabels int64
	cost := int64(pbCostSample)
	for left > 0 {
		f, err := s.next(&left)
		if err != nil {
			return err
		}
		switch f.num {
		case 1: // location_id
			err = s.repeated(f, func(id uint64) error {
				if id == 0 {
					return s.fail("sample has nil location: location id 0")
				}
				s.locRefs.add(id)
				cost += pbCostLocRef
				return nil
			})
		case 2: // value
			err = s.repeated(f, func(u uint64) error {
				if s.samples == 0 && nvalues == int64(len(s.sums.pos)) {
					if nvalues == MaxSampleTypes {
						return fmt.Errorf("%w: a sample has more than %d values (one per sample type, the limit)", ErrTooLarge, MaxSampleTypes)
					}
					s.sums.grow()
				}
				if nvalues < int64(len(s.sums.pos)) {
					if err := s.sums.add(int(nvalues), int64(u)); err != nil {
						return fmt.Errorf("%w: %w", ErrUnusable, err)
					}
				}
				nvalues++
				cost += pbCostValue
				return nil
			})
		case 3: // label
			if err := s.want(f, 2); err != nil {
				return err
			}
			err = s.label(f.n)
			nlabels++
			cost += pbCostLabel
		default:
			err = s.unknown(f)
		}
		if err != nil {
			return err
		}
		if cost > 1<<20 {
			// A sample with a million values or locations: charge it
			// on the way rather than at its end.
			if err := s.spend(cost); err != nil {
				return err
			}
			cost = 0
		}
	}
	if s.samples == 0 {
		s.values = nvalues
	} else if nvalues != s.values {
		return s.fail("mismatch: sample %d has %d values, sample 1 has %d", s.samples+1, nvalues, s.values)
	}
	s.samples++
	return s.spend(cost)
}

// label reads a Label and checks the string indices pprof resolves: the
// key always, the string value when set, else the unit when set.
func (s *pbScan) label(n int64) error {
	left := n
	var x [5]int64 // key, str, num, unit by field number
	for left > 0 {
		f, err := s.next(&left)
		if err != nil {
			return err
		}
		if f.num >= 1 && f.num <= 4 {
			if err := s.want(f, 0); err != nil {
				return err
			}
			x[f.num] = int64(f.u64)
		} else if err := s.unknown(f); err != nil {
			return err
		}
	}
	if err := s.str(x[1]); err != nil {
		return err
	}
	switch {
	case x[2] != 0:
		return s.str(x[2])
	case x[4] != 0:
		return s.str(x[4])
	}
	return nil
}

func (s *pbScan) mapping(f field) error {
	if err := s.want(f, 2); err != nil {
		return err
	}
	left := f.n
	var id uint64
	var file, build int64
	for left > 0 {
		f, err := s.next(&left)
		if err != nil {
			return err
		}
		switch {
		case f.num >= 1 && f.num <= 10:
			if err := s.want(f, 0); err != nil {
				return err
			}
			switch f.num {
			case 1:
				id = f.u64
			case 5:
				file = int64(f.u64)
			case 6:
				build = int64(f.u64)
			}
		default:
			if err := s.unknown(f); err != nil {
				return err
			}
		}
	}
	if id == 0 {
		return s.fail("found mapping with reserved ID=0")
	}
	if err := s.str(file); err != nil {
		return err
	}
	if err := s.str(build); err != nil {
		return err
	}
	s.mapIDs = append(s.mapIDs, id)
	return s.spend(pbCostMapping)
}

func (s *pbScan) location(f field) error {
	if err := s.want(f, 2); err != nil {
		return err
	}
	left := f.n
	var id uint64
	cost := int64(pbCostLocation)
	for left > 0 {
		f, err := s.next(&left)
		if err != nil {
			return err
		}
		switch f.num {
		case 1, 2, 3, 5: // id, mapping_id (a missing mapping is allowed), address, is_folded
			if err := s.want(f, 0); err != nil {
				return err
			}
			if f.num == 1 {
				id = f.u64
			}
		case 4: // line
			if err := s.want(f, 2); err != nil {
				return err
			}
			if err := s.line(f.n); err != nil {
				return err
			}
			cost += pbCostLine
		default:
			err = s.unknown(f)
		}
		if err != nil {
			return err
		}
	}
	if id == 0 {
		return s.fail("found location with reserved id=0")
	}
	s.locIDs = append(s.locIDs, id)
	return s.spend(cost)
}

// line reads a Line: its function must exist (checked at the end).
func (s *pbScan) line(n int64) error {
	left := n
	var fn uint64
	for left > 0 {
		f, err := s.next(&left)
		if err != nil {
			return err
		}
		switch f.num {
		case 1, 2, 3: // function_id, line, column
			if err := s.want(f, 0); err != nil {
				return err
			}
			if f.num == 1 {
				fn = f.u64
			}
		default:
			if err := s.unknown(f); err != nil {
				return err
			}
		}
	}
	if fn == 0 {
		return s.fail("a line with nil function: function id 0")
	}
	s.funcRefs.add(fn)
	return nil
}

func (s *pbScan) function(f field) error {
	if err := s.want(f, 2); err != nil {
		return err
	}
	left := f.n
	var id uint64
	var strs [3]int64
	for left > 0 {
		f, err := s.next(&left)
		if err != nil {
			return err
		}
		switch f.num {
		case 1, 2, 3, 4, 5: // id, name, system_name, filename, start_line
			if err := s.want(f, 0); err != nil {
				return err
			}
			switch f.num {
			case 1:
				id = f.u64
			case 2, 3, 4:
				strs[f.num-2] = int64(f.u64)
			}
		default:
			if err := s.unknown(f); err != nil {
				return err
			}
		}
	}
	if id == 0 {
		return s.fail("found function with reserved ID=0")
	}
	for _, x := range strs {
		if err := s.str(x); err != nil {
			return err
		}
	}
	s.funcIDs = append(s.funcIDs, id)
	return s.spend(pbCostFunction)
}

// end applies the checks that need the whole profile.
func (s *pbScan) end() error {
	for _, x := range s.top {
		if err := s.str(x); err != nil {
			return err
		}
	}
	if err := s.str(s.periodUnit); err != nil {
		return err
	}
	if s.maxStr >= s.strs {
		return s.fail("malformed profile format: string index %d, but the string table has %d entries", s.maxStr, s.strs)
	}
	if s.sampleTypes == 0 {
		return s.fail("the profile has no sample types")
	}
	if s.samples > 0 && s.values != s.sampleTypes {
		return s.fail("mismatch: samples have %d values, the profile %d sample types", s.values, s.sampleTypes)
	}
	for _, ids := range []struct {
		what string
		ids  []uint64
	}{{"mappings", s.mapIDs}, {"functions", s.funcIDs}, {"locations", s.locIDs}} {
		slices.Sort(ids.ids)
		for i := 1; i < len(ids.ids); i++ {
			if ids.ids[i] == ids.ids[i-1] {
				return s.fail("multiple %s with same id: %d", ids.what, ids.ids[i])
			}
		}
	}
	// The usual ids are 1…n: then a reference is valid when it is in that
	// range. Otherwise a second pass looks every reference up.
	for _, c := range []struct {
		refs refRange
		ids  []uint64
	}{{s.locRefs, s.locIDs}, {s.funcRefs, s.funcIDs}} {
		if c.refs.n == 0 {
			continue
		}
		if n := uint64(len(c.ids)); n == 0 || c.ids[n-1] != n {
			s.needRefsPass = true
		} else if c.refs.max > n {
			s.needRefsPass = true // names the missing id
		}
	}
	return nil
}

// refsPass reads the stream again and checks that every location a sample
// names and every function a line names exists.
func (s *pbScan) refsPass(r *bufio.Reader) error {
	c := &pbRefs{pbScan: pbScan{r: r, budget: math.MaxInt64}, locs: s.locIDs, funcs: s.funcIDs}
	return c.walk()
}

// pbRefs walks the stream a second time, only for references. The first
// walk has already checked the structure.
type pbRefs struct {
	pbScan
	locs, funcs []uint64
}

func has(ids []uint64, id uint64) bool {
	_, ok := slices.BinarySearch(ids, id)
	return ok
}

func (c *pbRefs) walk() error {
	left := int64(-1)
	for {
		f, err := c.next(&left)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch {
		case f.num == 2 && f.typ == 2: // sample
			err = c.sub(f.n, func(f field) error {
				if f.num != 1 {
					return c.unknown(f)
				}
				return c.repeated(f, func(id uint64) error {
					if !has(c.locs, id) {
						return c.fail("sample has nil location: no location with id %d", id)
					}
					return nil
				})
			})
		case f.num == 4 && f.typ == 2: // location
			err = c.sub(f.n, func(f field) error {
				if f.num != 4 || f.typ != 2 {
					return c.unknown(f)
				}
				return c.sub(f.n, func(f field) error {
					if f.num == 1 && f.typ == 0 && !has(c.funcs, f.u64) {
						return c.fail("a line names function %d, which does not exist", f.u64)
					}
					return c.unknown(f)
				})
			})
		default:
			err = c.unknown(f)
		}
		if err != nil {
			return err
		}
	}
}

// sub calls fn for each field of an n-byte message.
func (c *pbRefs) sub(n int64, fn func(field) error) error {
	left := n
	for left > 0 {
		f, err := c.next(&left)
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

// valueSums adds up each sample type's values, the positive and the
// negative ones apart: any sum of some of the values (a flame graph node,
// a function's total) lies between the two, so when neither overflows
// int64, nothing built from the samples does.
type valueSums struct {
	pos, neg []int64
}

func (v *valueSums) grow() {
	v.pos = append(v.pos, 0)
	v.neg = append(v.neg, 0)
}

var errValueOverflow = errors.New("the sample values overflow int64")

func (v *valueSums) add(i int, x int64) error {
	switch {
	case x > 0:
		if v.pos[i] > math.MaxInt64-x {
			return fmt.Errorf("%w: the positive values of sample type %d add up to more than %d", errValueOverflow, i+1, int64(math.MaxInt64))
		}
		v.pos[i] += x
	case x < 0:
		if v.neg[i] < math.MinInt64-x {
			return fmt.Errorf("%w: the negative values of sample type %d add up to less than %d", errValueOverflow, i+1, int64(math.MinInt64))
		}
		v.neg[i] += x
	}
	return nil
}
