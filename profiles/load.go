package profiles

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/google/pprof/profile"
)

// ErrNotProfile is wrapped by every error of Load and ParseFolded that means
// "this input is not a profile". Its text says what was expected.
var ErrNotProfile = errors.New("profiles: not a profile: expected a pprof profile (protobuf, gzipped or not) or folded stacks text: lines of 'frame;frame;frame count'")

// maxFoldedGunzip bounds the size of gzipped folded text once decompressed.
const maxFoldedGunzip = 512 << 20

// Load parses a profile in any format kbench accepts, detecting which:
//
//   - pprof protobuf, gzipped or not, and the legacy formats
//     profile.Parse still reads (legacy binary CPU profiles, text heap,
//     contention, thread and Java profiles);
//   - folded stacks text (see ParseFolded), plain or gzipped, with the
//     default 10 ms period.
//
// pprof is tried first: text can never be a valid pprof protobuf (its string
// table starts with an empty string, which needs a NUL byte), and the legacy
// text formats start with headers folded stacks do not have. A profile
// without sample types is rejected. Folded stacks are only tried on input
// that looks like text (UTF-8 without NUL bytes in its first 64 KiB), so
// binary junk is never read as a stack named by its bytes. Errors wrap
// ErrNotProfile and give the folded parser's complaint, with its line
// number, when the input looks like text, otherwise pprof's.
//
// Load is for bytes kbench wrote itself (stored profiles): pprof
// decompresses gzip whole into memory. Uploads go through LoadUpload,
// which reads the same formats with limits, as a stream first.
func Load(data []byte) (*profile.Profile, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("%w; the input is empty", ErrNotProfile)
	}
	p, perr := parsePprof(data)
	if perr == nil {
		if len(p.SampleType) == 0 {
			return nil, fmt.Errorf("%w; the pprof profile has no sample types", ErrNotProfile)
		}
		return p, nil
	}
	text := data
	if isGzip(data) {
		var err error
		if text, err = gunzip(data, maxFoldedGunzip); err != nil {
			return nil, fmt.Errorf("%w; gzip: %w", ErrNotProfile, err)
		}
	}
	if !looksText(text) {
		return nil, fmt.Errorf("%w; pprof: %w", ErrNotProfile, perr)
	}
	p, ferr := ParseFolded(bytes.NewReader(text), 0)
	if ferr != nil {
		return nil, fmt.Errorf("%w; %w", ErrNotProfile, ferr)
	}
	return p, nil
}

// parsePprof is profile.ParseData, with a panic on malformed input (none is
// known, but uploads are hostile) turned into an error.
func parsePprof(data []byte) (p *profile.Profile, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("parser failed: %v", r)
		}
	}()
	return profile.ParseData(data)
}

func isGzip(b []byte) bool {
	return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b
}

func gunzip(b []byte, limit int64) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(io.LimitReader(zr, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(out)) > limit {
		return nil, fmt.Errorf("decompressed data larger than %d bytes", limit)
	}
	return out, nil
}

// looksText reports whether the start of b is UTF-8 text without NUL bytes.
func looksText(b []byte) bool {
	const probe = 64 << 10
	cut := len(b) > probe
	if cut {
		b = b[:probe]
	}
	for i := 0; i < len(b); {
		if b[i] == 0 {
			return false
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			// A rune cut off by the probe limit is fine.
			if cut && len(b)-i < utf8.UTFMax && !utf8.FullRune(b[i:]) {
				return true
			}
			return false
		}
		i += size
	}
	return true
}

// KindOther is the kind kbench gives a profile Kind cannot name (a
// profile of another tool whose sample types say nothing kbench knows).
const KindOther = "other"

// Kind guesses which profile p is: "cpu", "wall", "heap", "allocs",
// "mutex", "block" or "goroutine", or "" when none fits. The rules, first
// match wins:
//
//   - "cpu": a sample type or the period type is "cpu" (Go CPU profiles,
//     folded stacks, pprof's legacy CPU formats).
//   - "wall": a sample type or the period type is "wall": thread samples
//     taken whatever the thread was doing (kbench's conversion of a Java
//     Flight Recorder recording, wall-clock profilers' pprof output).
//   - "goroutine": a sample type "goroutine" (Go's goroutine profile,
//     goroutine/count).
//   - "allocs" or "heap": a sample type alloc_space, alloc_objects,
//     inuse_space, inuse_objects or space (legacy heap). Go writes the same
//     four sample types for both profiles and tells them apart only by
//     DefaultSampleType: "alloc_space" for allocs, unset for heap. So
//     "allocs" when DefaultSampleType starts with "alloc_" or the profile
//     has no inuse_ sample type, else "heap".
//   - "mutex" or "block": sample types contentions/count and
//     delay/nanoseconds. Go writes both profiles identically, so the stacks
//     decide: the mutex profile records the unlocker, so if any sample's
//     innermost frames (the leaf and its two callers) are an unlock —
//     a name ending in "Unlock" or "unlockSlow" (sync and internal/sync
//     Mutex and RWMutex), or runtime.unlock, runtime.unlock2,
//     runtime._LostContendedRuntimeLock — it is "mutex"; otherwise
//     (blocking calls such as Lock, chanrecv, selectgo, Wait, or no samples
//     at all) "block".
//
// kbench records the kind of the profiles it writes itself; Kind is for
// imported ones.
func Kind(p *profile.Profile) string {
	has := func(t string) bool {
		for _, st := range p.SampleType {
			if st != nil && st.Type == t {
				return true
			}
		}
		return false
	}
	hasPrefix := func(prefix string) bool {
		for _, st := range p.SampleType {
			if st != nil && strings.HasPrefix(st.Type, prefix) {
				return true
			}
		}
		return false
	}
	switch {
	case has("cpu") || (p.PeriodType != nil && p.PeriodType.Type == "cpu"):
		return "cpu"
	case has("wall") || (p.PeriodType != nil && p.PeriodType.Type == "wall"):
		return "wall"
	case has("goroutine"):
		return "goroutine"
	case hasPrefix("alloc_") || hasPrefix("inuse_") || has("space"):
		if strings.HasPrefix(p.DefaultSampleType, "alloc_") || !hasPrefix("inuse_") {
			return "allocs"
		}
		return "heap"
	case has("contentions") || has("delay"):
		if hasUnlockLeaf(p) {
			return "mutex"
		}
		return "block"
	}
	return ""
}

func hasUnlockLeaf(p *profile.Profile) bool {
	for _, x := range p.Sample {
		if x == nil {
			continue
		}
		seen := 0
		for _, l := range x.Location {
			if l == nil {
				continue
			}
			for _, ln := range l.Line { // Line[0] is the innermost
				if ln.Function != nil && isUnlock(ln.Function.Name) {
					return true
				}
				if seen++; seen >= 3 {
					break
				}
			}
			if seen >= 3 {
				break
			}
		}
	}
	return false
}

func isUnlock(name string) bool {
	switch name {
	case "runtime.unlock", "runtime.unlock2", "runtime._LostContendedRuntimeLock":
		return true
	}
	return strings.HasSuffix(name, "Unlock") || strings.HasSuffix(name, "unlockSlow")
}
