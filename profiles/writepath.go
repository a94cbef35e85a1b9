package profiles

import (
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// WritePathReport splits a profile's socket (and file) I/O by system call
// shape: gathering calls (writev/readv: many buffers, one system call) and
// single-buffer calls (write/read: one system call per buffer). It answers
// "does this client coalesce its writes?" from a CPU profile alone.
type WritePathReport struct {
	// Total is the profile's total for the chosen sample type.
	Total int64          `json:"total"`
	Unit  string         `json:"unit"`
	Rows  []WritePathRow `json:"rows"`
}

// WritePathRow is one (direction, path) class of samples.
type WritePathRow struct {
	Direction string `json:"direction"` // "write" or "read"
	// Path is "gather" (writev/readv), "single" (write/read) or "unknown":
	// the stack shows an I/O call whose shape it does not reveal (say,
	// Java's SocketChannelImpl.write, which has a one-buffer and an
	// array overload, sampled before it reached the native call).
	Path  string `json:"path"`
	Value int64  `json:"value"` // sum of the matching samples' values
	// Samples is how many profile samples (distinct stack records, not
	// profiler ticks) matched; Value carries their weight.
	Samples int64   `json:"samples"`
	Percent float64 `json:"percent"` // 100 × Value / Total
	// Frames are the distinct frame names, as written in the profile, that
	// matched this row's patterns, sorted.
	Frames []string `json:"frames"`
}

// ioClass is what one frame says about the I/O a stack is doing.
type ioClass uint8

const (
	ioNone ioClass = iota
	ioWriteGather
	ioWriteSingle
	ioWriteAny // a write of unknown shape
	ioReadGather
	ioReadSingle
	ioReadAny
)

func (c ioClass) dir() int { // 0 none, 1 write, 2 read
	switch c {
	case ioWriteGather, ioWriteSingle, ioWriteAny:
		return 1
	case ioReadGather, ioReadSingle, ioReadAny:
		return 2
	}
	return 0
}

func (c ioClass) decisive() bool { return c != ioNone && c != ioWriteAny && c != ioReadAny }

// Frame patterns. Names are matched whole, never as substrings: the public
// Java/perf profile this was checked against has native_write_msr_safe,
// tcp_write_xmit and AbstractByteBuf.writeBytes (a read path) on its stacks,
// and vfs_write, do_sync_write and tcp_sendmsg run inside both write(2) and
// writev(2) on some kernels, so only entry points that belong to exactly one
// system call are listed.
var (
	// Go, function names exactly as the runtime writes them.
	// net.Buffers.WriteTo is absent on purpose: it is one writev only on a
	// concrete *net.TCPConn and silently one Write per buffer through any
	// wrapper (TLS, bufio, a counting conn), so the frames below it decide.
	goIOFrames = map[string]ioClass{
		// (*FD).Writev → writev (SYS_WRITEV); syscall.writev on darwin.
		"internal/poll.(*FD).Writev":   ioWriteGather,
		"internal/poll.writev":         ioWriteGather,
		"syscall.writev":               ioWriteGather,
		"net.(*netFD).writeBuffers":    ioWriteGather, // only ever calls (*FD).Writev
		"golang.org/x/sys/unix.Writev": ioWriteGather,
		"golang.org/x/sys/unix.writev": ioWriteGather,
		// (*FD).Write → ignoringEINTRIO(syscall.Write) → syscall.write.
		"internal/poll.(*FD).Write":   ioWriteSingle,
		"syscall.Write":               ioWriteSingle,
		"syscall.write":               ioWriteSingle,
		"golang.org/x/sys/unix.Write": ioWriteSingle,
		"golang.org/x/sys/unix.write": ioWriteSingle,
		// The standard library never issues readv; these only appear with
		// golang.org/x/sys/unix or a future internal/poll.
		"internal/poll.(*FD).Readv":   ioReadGather,
		"internal/poll.readv":         ioReadGather,
		"syscall.readv":               ioReadGather,
		"golang.org/x/sys/unix.Readv": ioReadGather,
		"golang.org/x/sys/unix.readv": ioReadGather,
		"internal/poll.(*FD).Read":    ioReadSingle,
		"syscall.Read":                ioReadSingle,
		"syscall.read":                ioReadSingle,
		"golang.org/x/sys/unix.Read":  ioReadSingle,
		"golang.org/x/sys/unix.read":  ioReadSingle,
	}

	// Kernel system call entry points (old sys_*, 4.17+ __x64_sys_* and
	// friends) and glibc wrappers, as perf and async-profiler name them
	// (an "_[k]" annotation is ignored). do_writev/do_readv are reached only
	// from the vectored calls.
	nativeIOFrames = map[string]ioClass{
		"sys_writev": ioWriteGather, "__x64_sys_writev": ioWriteGather, "__ia32_sys_writev": ioWriteGather,
		"__arm64_sys_writev": ioWriteGather, "__se_sys_writev": ioWriteGather, "__do_sys_writev": ioWriteGather,
		"do_writev": ioWriteGather, "__GI___writev": ioWriteGather, "__writev": ioWriteGather,
		"__libc_writev": ioWriteGather, "writev": ioWriteGather,

		"sys_write": ioWriteSingle, "__x64_sys_write": ioWriteSingle, "__ia32_sys_write": ioWriteSingle,
		"__arm64_sys_write": ioWriteSingle, "__se_sys_write": ioWriteSingle, "__do_sys_write": ioWriteSingle,
		"ksys_write": ioWriteSingle, "__GI___libc_write": ioWriteSingle, "__libc_write": ioWriteSingle,
		"__write_nocancel": ioWriteSingle, "__write": ioWriteSingle, "write": ioWriteSingle,

		"sys_readv": ioReadGather, "__x64_sys_readv": ioReadGather, "__ia32_sys_readv": ioReadGather,
		"__arm64_sys_readv": ioReadGather, "__se_sys_readv": ioReadGather, "__do_sys_readv": ioReadGather,
		"do_readv": ioReadGather, "__GI___readv": ioReadGather, "__readv": ioReadGather,
		"__libc_readv": ioReadGather, "readv": ioReadGather,

		"sys_read": ioReadSingle, "__x64_sys_read": ioReadSingle, "__ia32_sys_read": ioReadSingle,
		"__arm64_sys_read": ioReadSingle, "__se_sys_read": ioReadSingle, "__do_sys_read": ioReadSingle,
		"ksys_read": ioReadSingle, "__GI___libc_read": ioReadSingle, "__libc_read": ioReadSingle,
		"__read_nocancel": ioReadSingle, "__read": ioReadSingle, "read": ioReadSingle,
	}

	// Java NIO, after normalizing the frame name to "package.Class.method"
	// (see javaName). The JDK funnels every socket channel write through
	// IOUtil.write into a NativeDispatcher: one buffer goes to
	// write0 (write(2)), an array to writev0 (writev(2)); reads likewise
	// to read0/readv0. Kafka's Java client writes arrays of buffers
	// (gathering); Netty writes one buffer or an array depending on how
	// many are queued.
	javaIOFrames = map[string]ioClass{
		"sun.nio.ch.FileDispatcherImpl.writev0": ioWriteGather, // native writev(2)
		"sun.nio.ch.FileDispatcherImpl.writev":  ioWriteGather,
		"sun.nio.ch.SocketDispatcher.writev0":   ioWriteGather, // newer JDKs
		"sun.nio.ch.SocketDispatcher.writev":    ioWriteGather,

		"sun.nio.ch.FileDispatcherImpl.write0":    ioWriteSingle, // native write(2)
		"sun.nio.ch.FileDispatcherImpl.write":     ioWriteSingle,
		"sun.nio.ch.SocketDispatcher.write0":      ioWriteSingle,
		"sun.nio.ch.SocketDispatcher.write":       ioWriteSingle,
		"sun.nio.ch.IOUtil.writeFromNativeBuffer": ioWriteSingle, // the one-buffer helper
		"sun.nio.ch.NioSocketImpl.tryWrite":       ioWriteSingle, // java.net.Socket streams, JDK 13+

		// Both have a one-buffer and an array overload; folded stacks
		// usually carry no signature, so only a signature (async-profiler
		// --sig) or a frame further down can tell them apart.
		"sun.nio.ch.SocketChannelImpl.write": ioWriteAny,
		"sun.nio.ch.IOUtil.write":            ioWriteAny,

		"sun.nio.ch.FileDispatcherImpl.readv0": ioReadGather,
		"sun.nio.ch.FileDispatcherImpl.readv":  ioReadGather,
		"sun.nio.ch.SocketDispatcher.readv0":   ioReadGather,
		"sun.nio.ch.SocketDispatcher.readv":    ioReadGather,

		"sun.nio.ch.FileDispatcherImpl.read0":    ioReadSingle,
		"sun.nio.ch.FileDispatcherImpl.read":     ioReadSingle,
		"sun.nio.ch.SocketDispatcher.read0":      ioReadSingle,
		"sun.nio.ch.SocketDispatcher.read":       ioReadSingle,
		"sun.nio.ch.IOUtil.readIntoNativeBuffer": ioReadSingle,
		"sun.nio.ch.NioSocketImpl.tryRead":       ioReadSingle,

		"sun.nio.ch.SocketChannelImpl.read": ioReadAny,
		"sun.nio.ch.IOUtil.read":            ioReadAny,
	}
)

// classifyFrame says what a frame name reveals about I/O.
func classifyFrame(name string) ioClass {
	if c, ok := goIOFrames[name]; ok {
		return c
	}
	name = stripAnnotation(name)
	if c, ok := nativeIOFrames[name]; ok {
		return c
	}
	qual, sig := javaName(name)
	c := javaIOFrames[qual]
	if sig != "" && (c == ioWriteAny || c == ioReadAny) {
		// A signature settles the overload: an array of ByteBuffers is
		// the gathering/scattering one.
		gather := strings.Contains(sig, "[Ljava/nio/ByteBuffer;") || strings.Contains(sig, "java.nio.ByteBuffer[]")
		switch {
		case c == ioWriteAny && gather:
			c = ioWriteGather
		case c == ioWriteAny:
			c = ioWriteSingle
		case gather:
			c = ioReadGather
		default:
			c = ioReadSingle
		}
	}
	return c
}

// stripAnnotation removes a trailing frame-type annotation that perf's
// stackcollapse and async-profiler add: "_[j]" (JIT-compiled), "_[i]"
// (inlined), "_[k]" (kernel), "_[0]"/"_[1]" (interpreted, C1) and similar.
func stripAnnotation(name string) string {
	if !strings.HasSuffix(name, "]") {
		return name
	}
	i := strings.LastIndex(name, "_[")
	if i < 0 || len(name)-i > 6 { // at most "_[abc]"
		return name
	}
	return name[:i]
}

// javaName normalizes the ways profilers write a Java method to
// "package.Class.method", returning any signature separately:
//
//	sun/nio/ch/FileDispatcherImpl:.write0           perf-map-agent (older)
//	Lsun/nio/ch/FileDispatcherImpl;::write0         perf-map-agent
//	sun/nio/ch/FileDispatcherImpl.write0            async-profiler
//	sun/nio/ch/IOUtil.write(Ljava/io/FileDescriptor;[Ljava/nio/ByteBuffer;...)J   async-profiler --sig
//	sun.nio.ch.FileDispatcherImpl.write0            dotted (JFR tools)
func javaName(name string) (qual, sig string) {
	if i := strings.IndexByte(name, '('); i >= 0 {
		name, sig = name[:i], name[i:]
	}
	if i := strings.Index(name, ";::"); i >= 0 {
		name = strings.TrimPrefix(name[:i], "L") + "." + name[i+3:]
	} else if i := strings.Index(name, ":."); i >= 0 {
		name = name[:i] + "." + name[i+2:]
	} else if i := strings.Index(name, "::"); i >= 0 {
		name = name[:i] + "." + name[i+2:]
	}
	return strings.ReplaceAll(name, "/", "."), sig
}

// WritePaths classifies every sample of p by the I/O calls on its stack
// (Go, Java NIO, kernel and libc frames; see the pattern tables in
// writepath.go) and sums each class for sample type sampleIndex.
//
// A sample belongs to at most one row. Reading its stack from the leaf up,
// the first frame that matches any pattern gives the direction (write or
// read); then the first frame of that direction that reveals the call's
// shape gives the path: gather (writev/readv) or single (write/read). If
// none does, the path is "unknown". The leaf-most frame wins because it is
// closest to the system call actually made.
//
// Rows always include write/gather, write/single, read/gather and
// read/single, in that order, followed by write/unknown and read/unknown
// when they matched anything. Samples with value 0 are ignored; an index
// out of range gives an empty report.
func WritePaths(p *profile.Profile, sampleIndex int) WritePathReport {
	type rowKey struct{ dir, path string }
	order := []rowKey{{"write", "gather"}, {"write", "single"}, {"read", "gather"}, {"read", "single"}, {"write", "unknown"}, {"read", "unknown"}}
	rows := make([]WritePathRow, len(order))
	frames := make([]map[string]bool, len(order))
	for i, k := range order {
		rows[i] = WritePathRow{Direction: k.dir, Path: k.path, Frames: []string{}}
		frames[i] = map[string]bool{}
	}
	var rep WritePathReport
	if sampleIndex < 0 || sampleIndex >= len(p.SampleType) || p.SampleType[sampleIndex] == nil {
		rep.Rows = rows[:4]
		return rep
	}
	rep.Unit = p.SampleType[sampleIndex].Unit

	names := newNameTable()
	st := newStacker(p, names)
	var classes []ioClass // by name ID, computed on first use
	var known []bool
	class := func(id int32) ioClass {
		if int(id) >= len(classes) {
			n := len(names.list)
			classes = append(classes, make([]ioClass, n-len(classes))...)
			known = append(known, make([]bool, n-len(known))...)
		}
		if !known[id] {
			classes[id] = classifyFrame(names.list[id])
			known[id] = true
		}
		return classes[id]
	}
	// rowOf maps a decisive class (or the direction's "any") to its row.
	rowOf := map[ioClass]int{ioWriteGather: 0, ioWriteSingle: 1, ioReadGather: 2, ioReadSingle: 3, ioWriteAny: 4, ioReadAny: 5}

	var buf []int32
	for _, x := range p.Sample {
		if x == nil {
			continue
		}
		v, ok := sampleValue(x, sampleIndex, 1)
		if !ok || v == 0 {
			continue
		}
		rep.Total += v
		buf = st.stack(x, buf[:0])
		dir := 0
		var decided ioClass
		for i := len(buf) - 1; i >= 0; i-- {
			c := class(buf[i])
			if c == ioNone || (dir != 0 && c.dir() != dir) {
				continue
			}
			if dir == 0 {
				dir = c.dir()
				decided = c
			}
			if c.decisive() {
				decided = c
				break
			}
		}
		if dir == 0 {
			continue
		}
		r := rowOf[decided]
		rows[r].Value += v
		rows[r].Samples++
		for _, id := range buf {
			if c := class(id); c == decided {
				frames[r][names.list[id]] = true
			}
		}
	}
	for i := range rows {
		for f := range frames[i] {
			rows[i].Frames = append(rows[i].Frames, f)
		}
		slices.Sort(rows[i].Frames)
		if rep.Total != 0 {
			rows[i].Percent = 100 * float64(rows[i].Value) / float64(rep.Total)
		}
	}
	rep.Rows = rows[:4]
	for _, r := range rows[4:] {
		if r.Samples > 0 {
			rep.Rows = append(rep.Rows, r)
		}
	}
	return rep
}
