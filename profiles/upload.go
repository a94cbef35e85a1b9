package profiles

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"strings"

	"github.com/google/pprof/profile"
)

// Limits on uploaded profiles. A gzip stream can hold a thousand times its
// size (a 1 MB upload of 1 GiB of zeros), and pprof's parser reads a whole
// input into memory before it looks at it, so LoadUpload never hands pprof
// anything it has not first read as a stream, keeping nothing.
const (
	// MaxDecompressedBytes is the most an uploaded profile may hold once
	// decompressed: 256 MiB. Real profiles are far smaller (a 240 s CPU
	// profile of a large Go program is 2.4 MB), so this only ever stops
	// decompression bombs.
	MaxDecompressedBytes = 256 << 20
	// MaxLoadBytes is the most memory loading one uploaded profile may
	// take: its bytes, the parsed profile and its re-encoding, as
	// estimated from counting its elements before anything is parsed.
	// A 240 s CPU profile of a large Go program needs about 20 MB.
	MaxLoadBytes = 512 << 20
	// MaxLegacyLoadBytes is the same bound for pprof's legacy formats
	// (the text heap, contention, goroutine and thread profiles of
	// debug=1 endpoints, and the old binary CPU profiles), which
	// LoadUpload can only recognise by their header: it cannot tell
	// before parsing whether pprof will accept the rest, so what it lets
	// pprof parse must stay small even when pprof then refuses it.
	MaxLegacyLoadBytes = 48 << 20
	// MaxSampleTypes is the most sample types (values per sample) a
	// profile may have; Go's profiles have one to four.
	MaxSampleTypes = 1 << 16
)

// Limits on what an uploaded profile draws, the same for every format
// (pprof, folded stacks, legacy pprof, a JFR recording converted by the
// client): they bound the memory of its flame graphs, which the load
// limits above do not (a profile small to load can still describe
// millions of call paths). TestDrawAtTheLimits measures what drawing an
// upload at all three limits allocates: under MaxDrawBytes.
const (
	// MaxStackDepth is the deepest stack an upload may hold, in frames as
	// the flame graph draws them (each inlined call a frame): deeper is
	// a 400. Go's own profiles stop at 64 frames (pprof's maxStack),
	// async-profiler at 2,048 by default, JFR at 64.
	MaxStackDepth = 10_000
	// MaxFlameNodes is the most frames an upload's flame graph may have
	// (distinct call paths from the root, the root not counted), over all
	// its samples and sample types: more is a 413. A 240 s CPU profile of
	// a large Go program has about 425,000.
	MaxFlameNodes = 1_000_000
	// MaxFrameNames is the most distinct frame names (functions, or
	// addresses where a frame has none) an upload may hold: more is a 413.
	MaxFrameNames = 100_000
	// MaxDrawBytes bounds what building, flattening and encoding the
	// flame graph of an upload within the limits above allocates, in all.
	MaxDrawBytes = 512 << 20
)

// ErrTooDeep is wrapped (with ErrUnusable) by LoadUpload's error for a
// stack deeper than MaxStackDepth.
var ErrTooDeep = errors.New("profiles: stack too deep")

// ErrTooLarge is wrapped by LoadUpload's errors for a profile over one of
// the limits above. The error says which.
var ErrTooLarge = errors.New("profiles: profile too large")

// ErrUnusable is wrapped by the errors for a profile that parses but that
// kbench cannot use: sample values whose totals overflow int64.
var ErrUnusable = errors.New("profiles: unusable profile")

// limits are the bounds an upload is read with: the Max… constants, but
// for tests that reach them without decompressing 256 MiB.
type limits struct {
	decompressed, load, legacyLoad int64
	// depth, nodes and names are MaxStackDepth, MaxFlameNodes and
	// MaxFrameNames; 0 stands for those.
	depth, nodes, names int
}

var defaultLimits = limits{decompressed: MaxDecompressedBytes, load: MaxLoadBytes, legacyLoad: MaxLegacyLoadBytes,
	depth: MaxStackDepth, nodes: MaxFlameNodes, names: MaxFrameNames}

// upload is one uploaded file being read.
type upload struct {
	open func() (io.ReadCloser, error)
	lim  limits
}

// errStopScan ends a text scan that has nothing left to look for.
var errStopScan = errors.New("profiles: stop scanning")

// errTwice: gzip inside gzip, which pprof never reads.
var errTwice = fmt.Errorf("%w; the file is gzip-compressed twice: decompress it once", ErrNotProfile)

// LoadUpload reads an uploaded profile in any format Load accepts, gzipped
// or not, without ever holding more of it in memory than it has checked.
// open is called once per pass and must return the upload from its start
// each time (a multipart file, an os.File).
//
// The passes, each reading the decompressed stream with a hard cap of
// MaxDecompressedBytes:
//
//  1. walk it as a pprof protobuf (pbScan): the same checks pprof's parser
//     makes, and an estimate of the memory parsing would take;
//  2. if that fails, as text: folded stacks line by line with
//     ParseFolded's own checks, or a legacy pprof format known by its
//     header;
//  3. for a protobuf whose ids are not 1…n, once more to check that every
//     referenced location and function exists;
//  4. parse: folded stacks straight from the stream, a protobuf or a
//     legacy profile from memory, now that its size is known to be safe.
//
// Input that is not a profile is refused in the first two passes, most of
// it within its first bytes, having kept nothing. Errors wrap
// ErrNotProfile (not a profile, including gzip errors and truncation),
// ErrTooLarge (over a limit) or ErrUnusable; any other error is the
// reader's.
func LoadUpload(open func() (io.ReadCloser, error)) (*profile.Profile, error) {
	return upload{open: open, lim: defaultLimits}.load()
}

func (u upload) load() (*profile.Profile, error) {
	pb := &pbScan{}
	errA := u.withContent(func(r *bufio.Reader) error {
		if head, _ := r.Peek(2); isGzip(head) {
			return errTwice
		}
		*pb = *newPBScan(r, u.lim.load)
		return pb.walk()
	})
	var pbe *pbError
	switch {
	case errA == nil:
		return u.loadProto(pb)
	case !errors.As(errA, &pbe):
		return nil, errA
	}

	ts := &textScan{lim: u.lim}
	if err := u.withContent(ts.scan); err != nil {
		return nil, err
	}
	if ts.size == 0 {
		return nil, fmt.Errorf("%w; the input is empty", ErrNotProfile)
	}
	if ts.legacy() {
		p, err := u.loadLegacy(ts.size)
		if err == nil {
			return p, u.check(p)
		}
		if !ts.foldedOK() {
			if ts.text {
				return nil, fmt.Errorf("%w; %w", ErrNotProfile, ts.foldedErr)
			}
			return nil, fmt.Errorf("%w; pprof: %w", ErrNotProfile, err)
		}
	}
	switch {
	case ts.foldedOK():
		var p *profile.Profile
		err := u.withContent(func(r *bufio.Reader) error {
			var err error
			p, err = ParseFolded(r, 0)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("%w; %w", ErrNotProfile, err)
		}
		return p, u.check(p)
	case ts.tooLarge != nil:
		return nil, ts.tooLarge
	case ts.text && ts.foldedErr != nil:
		return nil, fmt.Errorf("%w; %w", ErrNotProfile, ts.foldedErr)
	}
	return nil, fmt.Errorf("%w; %w", ErrNotProfile, errA)
}

// loadProto parses a protobuf the scan passed.
func (u upload) loadProto(pb *pbScan) (*profile.Profile, error) {
	if pb.needRefsPass {
		if err := u.withContent(pb.refsPass); err != nil {
			return nil, fmt.Errorf("%w; %w", ErrNotProfile, err)
		}
	}
	data, err := u.readContent(pb.off)
	if err != nil {
		return nil, err
	}
	p, err := parsePprof(data)
	if err != nil {
		return nil, fmt.Errorf("%w; pprof: %w", ErrNotProfile, err)
	}
	return p, u.check(p)
}

// check applies checkUpload, then the limits on what the profile draws.
func (u upload) check(p *profile.Profile) error {
	if err := checkUpload(p); err != nil {
		return err
	}
	return checkShape(p, u.lim)
}

// checkShape refuses a profile whose stacks are deeper than lim.depth, or
// whose flame graph would have more than lim.nodes frames or lim.names
// distinct names. It walks the call tree as BuildTree builds it (inlined
// calls expanded), but keys frames by function and address rather than
// by name, which builds no string: where two functions share a name it
// counts more frames than BuildTree draws, never fewer. Its map holds at
// most lim.nodes entries.
func checkShape(p *profile.Profile, lim limits) error {
	depth, nodes, names := cmp.Or(lim.depth, MaxStackDepth), cmp.Or(lim.nodes, MaxFlameNodes), cmp.Or(lim.names, MaxFrameNames)
	// Names: one per function, one per location drawn by its address
	// (no lines): what BuildTree's name table may hold, at most.
	n := len(p.Function)
	for _, l := range p.Location {
		if l != nil && len(l.Line) == 0 {
			n++
		}
	}
	if n > names {
		return fmt.Errorf("%w: %d distinct frame names (functions and addresses), more than the limit of %d", ErrTooLarge, n, names)
	}
	fns := make(map[*profile.Function]int32, len(p.Function))
	addrs := make(map[uint64]int32)
	frame := func(f *profile.Function, l *profile.Location) int32 {
		if f != nil {
			id, ok := fns[f]
			if !ok {
				id = int32(len(fns) + len(addrs))
				fns[f] = id
			}
			return id
		}
		id, ok := addrs[l.Address]
		if !ok {
			id = int32(len(fns) + len(addrs))
			addrs[l.Address] = id
		}
		return id
	}
	type edge struct {
		parent uint32
		frame  int32
	}
	kids := make(map[edge]uint32)
	for _, x := range p.Sample {
		if x == nil {
			continue
		}
		d := 0
		for _, l := range x.Location {
			if l != nil {
				d += max(len(l.Line), 1)
			}
		}
		if d > depth {
			return fmt.Errorf("%w: %w: a stack of %d frames, deeper than the limit of %d", ErrUnusable, ErrTooDeep, d, depth)
		}
		at := uint32(0)
		step := func(f int32) error {
			e := edge{at, f}
			c, ok := kids[e]
			if !ok {
				if len(kids) >= nodes {
					return fmt.Errorf("%w: its flame graph would have more than %d frames (distinct call paths; the limit)", ErrTooLarge, nodes)
				}
				c = uint32(len(kids) + 1)
				kids[e] = c
			}
			at = c
			return nil
		}
		// Root first: the last location, its outermost line (the last).
		for i := len(x.Location) - 1; i >= 0; i-- {
			l := x.Location[i]
			if l == nil {
				continue
			}
			if len(l.Line) == 0 {
				if err := step(frame(nil, l)); err != nil {
					return err
				}
			}
			for j := len(l.Line) - 1; j >= 0; j-- {
				if err := step(frame(l.Line[j].Function, l)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// loadLegacy parses a legacy format with pprof, from memory.
func (u upload) loadLegacy(size int64) (*profile.Profile, error) {
	data, err := u.readContent(size)
	if err != nil {
		return nil, err
	}
	return parsePprof(data)
}

// checkUpload applies kbench's own rules to a parsed upload: sample types,
// and totals within int64 (see valueSums).
func checkUpload(p *profile.Profile) error {
	if len(p.SampleType) == 0 {
		return fmt.Errorf("%w; the profile has no sample types", ErrNotProfile)
	}
	sums := valueSums{pos: make([]int64, len(p.SampleType)), neg: make([]int64, len(p.SampleType))}
	for _, x := range p.Sample {
		for i, v := range x.Value {
			if i >= len(sums.pos) {
				break
			}
			if err := sums.add(i, v); err != nil {
				st := p.SampleType[i]
				return fmt.Errorf("%w: %s/%s: %w", ErrUnusable, st.Type, st.Unit, err)
			}
		}
	}
	return nil
}

// withContent opens the upload, decompresses it when it is gzipped, and
// hands fn its content, capped at MaxDecompressedBytes.
func (u upload) withContent(fn func(*bufio.Reader) error) error {
	f, err := u.open()
	if err != nil {
		return err
	}
	defer f.Close()
	raw := bufio.NewReaderSize(readErrs{f}, 32<<10)
	var src io.Reader = raw
	if head, _ := raw.Peek(2); isGzip(head) {
		zr, err := gzip.NewReader(raw)
		if err != nil {
			return gzipErr(err)
		}
		defer zr.Close()
		src = gzipErrs{zr}
	}
	return fn(bufio.NewReaderSize(&capReader{r: src, left: u.lim.decompressed, cap: u.lim.decompressed}, 64<<10+utf8Max))
}

const utf8Max = 4

// readContent reads the whole content, which an earlier pass measured.
func (u upload) readContent(size int64) ([]byte, error) {
	var data []byte
	err := u.withContent(func(r *bufio.Reader) error {
		data = make([]byte, size)
		if _, err := io.ReadFull(r, data); err != nil {
			return fmt.Errorf("profiles: the upload changed between reads: %w", err)
		}
		if _, err := r.Peek(1); err != io.EOF {
			return fmt.Errorf("profiles: the upload changed between reads")
		}
		return nil
	})
	return data, err
}

// readError is an error of the upload's own reader (not of its content).
type readError struct{ err error }

func (e *readError) Error() string { return "profiles: read the upload: " + e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

type readErrs struct{ r io.Reader }

func (r readErrs) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		err = &readError{err}
	}
	return n, err
}

// gzipErrs marks the gzip reader's own errors (corrupt or truncated data)
// as not-a-profile errors, passing the upload reader's through.
type gzipErrs struct{ r io.Reader }

func (r gzipErrs) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		err = gzipErr(err)
	}
	return n, err
}

func gzipErr(err error) error {
	var re *readError
	if errors.As(err, &re) {
		return err
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("%w; gzip: the data ends early (a truncated file?)", ErrNotProfile)
	}
	return fmt.Errorf("%w; gzip: %w", ErrNotProfile, err)
}

// capReader reads at most left bytes, then fails with an ErrTooLarge
// error if there is more.
type capReader struct {
	r    io.Reader
	left int64
	cap  int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		for {
			n, err := c.r.Read(one[:])
			if n > 0 {
				return 0, fmt.Errorf("%w: decompressed, it holds more than %d MiB (the limit)", ErrTooLarge, c.cap>>20)
			}
			if err != nil {
				return 0, err
			}
		}
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// What loading text costs, per byte, line, stack, frame and address: see
// pbCost; TestUploadCostCovers measures them.
const (
	foldedCostBase     = 2 << 20
	foldedCostPerByte  = 5
	foldedCostStack    = 400  // per distinct stack
	foldedCostFrameRef = 48   // per frame of a distinct stack (16, and 32 for checkShape's map)
	foldedCostFrame    = 1024 // per distinct frame

	legacyCostBase    = 2 << 20
	legacyCostPerByte = 6
	legacyCostLine    = 768
	legacyCostAddr    = 560
	legacyCostWord    = 320 // binary CPU profiles: per 32-bit word
)

// textScan reads the content as text, when it is not a protobuf: folded
// stacks, checked line by line exactly as ParseFolded will, and pprof's
// legacy formats, recognised by their first line (or header words).
type textScan struct {
	lim       limits
	size      int64
	text      bool // starts as UTF-8 text without NUL bytes (Load's rule)
	folded    *foldedChecker
	foldedErr error
	tooLarge  error
	// legacyState: 0 looking for the first line that is not blank or a
	// comment, 1 it names a legacy format, 2 it does not.
	legacyState int
	legacyCPU   bool
	legacyBig   bool
	lines       int64
	addrs       int64
	// Distinct stacks and frames of folded stacks, by hash.
	seed               maphash.Seed
	stackSet, frameSet map[uint64]struct{}
	frameRefs          int64
}

func (t *textScan) foldedOK() bool { return t.text && t.foldedErr == nil && t.folded != nil }

func (t *textScan) legacy() bool {
	return (t.legacyState == 1 || t.legacyCPU) && !t.legacyBig
}

func (t *textScan) alive() bool {
	return t.foldedOK() || (t.legacyState != 2 || t.legacyCPU) && !t.legacyBig
}

func (t *textScan) scan(r *bufio.Reader) error {
	head, err := r.Peek(64<<10 + utf8Max)
	if err != nil && err != io.EOF {
		return err
	}
	t.text = looksText(head)
	t.legacyCPU = legacyCPUHeader(head)
	if t.text {
		t.folded = newFoldedChecker(DefaultFoldedPeriod)
	} else {
		t.foldedErr = errors.New("not text")
	}
	// pprof's legacy parsers read lines of up to 64 KiB: when the content
	// is no folded stacks, a longer line decides.
	maxLine := MaxFoldedLineBytes
	if !t.text {
		maxLine = 64 << 10
	}
	lr := newLineReader(r, maxLine)
	// A line over MaxFoldedLineBytes is no folded stack, and pprof's
	// legacy parsers give up on lines over 64 KiB, so a long first line
	// (1 GiB of zeros has no line break) decides at once.
	lr.onLong = func(b []byte) error {
		t.addrs += int64(bytes.Count(b, []byte("0x"))) + 1
		if t.legacyState == 0 {
			t.legacyState = 2
		}
		if t.foldedOK() {
			_, _, _, t.foldedErr = t.folded.line(nil, true)
		}
		if !t.alive() {
			return errStopScan
		}
		return nil
	}
	for {
		line, long, err := lr.next()
		t.size = lr.n
		if err == io.EOF {
			break
		}
		if err == errStopScan {
			return nil
		}
		if err != nil {
			return err
		}
		t.lines++
		t.addrs += int64(bytes.Count(line, []byte("0x")))
		if t.legacyState == 0 && !isSpaceOrComment(line) {
			t.legacyState = 2
			if !long && len(line) <= 64<<10 && legacyHeader(string(line)) {
				t.legacyState = 1
			}
		}
		if t.foldedOK() {
			if stack, _, ok, err := t.folded.line(line, long); err != nil {
				t.foldedErr = err
			} else if ok {
				t.countFolded(stack)
			}
			if t.foldedOK() && t.foldedCost() > t.lim.load {
				t.foldedErr = errors.New("too large")
				t.tooLarge = fmt.Errorf("%w: loading these folded stacks would take more than %d MiB of memory (the limit); %d lines in", ErrTooLarge, t.lim.load>>20, t.lines)
			}
		}
		if !t.legacyBig && t.legacyCost() > t.lim.legacyLoad {
			t.legacyBig = true
			if t.legacyState != 2 || t.legacyCPU {
				t.tooLarge = fmt.Errorf("%w: a profile in a legacy pprof format may take at most %d MiB of memory to load; this one would take more", ErrTooLarge, t.lim.legacyLoad>>20)
			}
		}
		if !t.alive() {
			return nil
		}
	}
	if t.foldedOK() {
		t.foldedErr = t.folded.end()
	}
	return nil
}

// countFolded counts what ParseFolded will keep of a line: a sample for
// each distinct stack, a function and location for each distinct frame.
// Both are counted exactly, by 64-bit hashes (seeded at random, so
// collisions cannot be aimed at): a set costs about 20 bytes an entry,
// a few percent of what the entry is charged, where counting every
// occurrence would refuse large real files of few distinct frames.
func (t *textScan) countFolded(stack string) {
	if t.stackSet == nil {
		t.seed = maphash.MakeSeed()
		t.stackSet = make(map[uint64]struct{})
		t.frameSet = make(map[uint64]struct{})
	}
	h := maphash.String(t.seed, stack)
	if _, dup := t.stackSet[h]; dup {
		return
	}
	t.stackSet[h] = struct{}{}
	for rest := stack; ; {
		name, tail, more := strings.Cut(rest, ";")
		t.frameRefs++
		t.frameSet[maphash.String(t.seed, name)] = struct{}{}
		if !more {
			return
		}
		rest = tail
	}
}

// foldedCost estimates what ParseFolded and the re-encoding take.
func (t *textScan) foldedCost() int64 {
	return foldedCostBase + foldedCostPerByte*t.size + foldedCostStack*int64(len(t.stackSet)) +
		foldedCostFrameRef*t.frameRefs + foldedCostFrame*int64(len(t.frameSet))
}

// legacyCost estimates what pprof's legacy parsers and the re-encoding
// take.
func (t *textScan) legacyCost() int64 {
	c := legacyCostBase + legacyCostPerByte*t.size + legacyCostLine*t.lines + legacyCostAddr*t.addrs
	if t.legacyCPU {
		c += legacyCostWord * (t.size / 4)
	}
	return c
}

// isSpaceOrComment is how pprof's legacy parsers skip lines before a
// header.
func isSpaceOrComment(line []byte) bool {
	s := bytes.TrimSpace(line)
	return len(s) == 0 || s[0] == '#'
}

// legacyHeader reports whether line may start one of pprof's legacy text
// formats: heap profiles ("heap profile: …"), Go's count profiles
// ("goroutine profile: total N"), and the "--- " headers of contention,
// mutex, thread and Java profiles. It errs on the side of yes: pprof
// decides.
func legacyHeader(line string) bool {
	return strings.Contains(line, "heap profile:") || strings.Contains(line, " profile: total ") || strings.Contains(line, "---")
}

// legacyCPUHeader reports whether b starts with the header of a legacy
// binary CPU profile: the words 0, 3, 0 or 1, a period, 0, in 32 or 64
// bits of either byte order.
func legacyCPUHeader(b []byte) bool {
	for _, size := range []int{4, 8} {
		if len(b) < 5*size {
			continue
		}
		for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			var w [5]uint64
			for i := range w {
				if size == 4 {
					w[i] = uint64(order.Uint32(b[i*4:]))
				} else {
					w[i] = order.Uint64(b[i*8:])
				}
			}
			if w[0] == 0 && w[1] == 3 && w[2] <= 1 && w[3] > 0 && w[4] == 0 {
				return true
			}
		}
	}
	return false
}
