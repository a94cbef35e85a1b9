package profiles

import (
	"os"
	"slices"
	"testing"
)

func TestWritePathsGo(t *testing.T) {
	p := loadFixture(t, fixtureBase)
	got := WritePaths(p, 0)
	want := WritePathReport{Total: 148, Unit: "count", Rows: []WritePathRow{
		{"write", "gather", 20, 1, 100 * 20.0 / 148, []string{"internal/poll.(*FD).Writev", "internal/poll.writev", "net.(*netFD).writeBuffers"}},
		// Two samples with the same stack (different labels) and one that
		// ends in (*FD).Write's inlined callee.
		{"write", "single", 55, 3, 100 * 55.0 / 148, []string{"internal/poll.(*FD).Write", "syscall.Write", "syscall.write"}},
		{"read", "gather", 0, 0, 0, []string{}},
		{"read", "single", 12, 1, 100 * 12.0 / 148, []string{"internal/poll.(*FD).Read", "syscall.Read", "syscall.read"}},
	}}
	checkWritePaths(t, got, want)

	// The target moved writes to writev; in nanoseconds this time.
	got = WritePaths(loadFixture(t, fixtureTarget), 1)
	if got.Unit != "nanoseconds" || got.Total != 152*10_000_000 {
		t.Errorf("target total = %d %s, want %d nanoseconds", got.Total, got.Unit, 152*10_000_000)
	}
	if g, w := got.Rows[0].Value, int64(60*10_000_000); g != w {
		t.Errorf("target write/gather = %d, want %d", g, w)
	}
	if g, w := got.Rows[1].Value, int64(12*10_000_000); g != w {
		t.Errorf("target write/single = %d, want %d", g, w)
	}

	empty := WritePaths(p, 9)
	if empty.Total != 0 || len(empty.Rows) != 4 {
		t.Errorf("bad index: got %+v, want four empty rows", empty)
	}
}

func checkWritePaths(t *testing.T, got, want WritePathReport) {
	t.Helper()
	if got.Total != want.Total || got.Unit != want.Unit {
		t.Errorf("total = %d %s, want %d %s", got.Total, got.Unit, want.Total, want.Unit)
	}
	if len(got.Rows) != len(want.Rows) {
		t.Fatalf("got %d rows %+v, want %d", len(got.Rows), got.Rows, len(want.Rows))
	}
	for i, w := range want.Rows {
		g := got.Rows[i]
		if g.Direction != w.Direction || g.Path != w.Path || g.Value != w.Value || g.Samples != w.Samples ||
			g.Percent != w.Percent || !slices.Equal(g.Frames, w.Frames) {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

func TestWritePathsJavaFolded(t *testing.T) {
	f, err := os.Open("testdata/java-io.folded")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := ParseFolded(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	const total = 40 + 5 + 25 + 2 + 9 + 1 + 3 + 3 + 4 + 6
	got := WritePaths(p, 0)
	pct := func(v float64) float64 { return 100 * v / total }
	want := WritePathReport{Total: total, Unit: "count", Rows: []WritePathRow{
		{"write", "gather", 45, 2, pct(45), []string{
			"__GI___writev", "__x64_sys_writev_[k]", "do_writev_[k]",
			"sun/nio/ch/FileDispatcherImpl.writev0_[j]", "sun/nio/ch/SocketDispatcher.writev_[j]"}},
		{"write", "single", 28, 2, pct(28), []string{
			"__write_nocancel", "sun/nio/ch/FileDispatcherImpl:.write0_[j]",
			"sun/nio/ch/IOUtil:.writeFromNativeBuffer_[j]", "sys_write"}},
		{"read", "gather", 3, 1, pct(3), []string{
			"sun/nio/ch/IOUtil.read(java.io.FileDescriptor, java.nio.ByteBuffer[], int, int, sun.nio.ch.NativeDispatcher)_[j]",
			"sun/nio/ch/SocketChannelImpl.read(java.nio.ByteBuffer[], int, int)_[j]"}},
		{"read", "single", 9, 1, pct(9), []string{
			"__read_nocancel", "sun/nio/ch/FileDispatcherImpl:.read0_[j]",
			"sun/nio/ch/IOUtil:.readIntoNativeBuffer_[j]", "sys_read"}},
		{"write", "unknown", 2, 1, pct(2), []string{"sun/nio/ch/SocketChannelImpl:.write_[j]"}},
		{"read", "unknown", 1, 1, pct(1), []string{"sun/nio/ch/SocketChannelImpl:.read_[j]"}},
	}}
	checkWritePaths(t, got, want)
}

func TestClassifyFrame(t *testing.T) {
	for _, tc := range []struct {
		name string
		want ioClass
	}{
		{"internal/poll.(*FD).Writev", ioWriteGather},
		{"internal/poll.(*FD).Write", ioWriteSingle},
		{"internal/poll.(*FD).Read", ioReadSingle},
		{"net.Buffers.WriteTo", ioNone}, // falls back to Write through wrappers
		{"bufio.(*Writer).Write", ioNone},
		// Java name styles.
		{"sun/nio/ch/FileDispatcherImpl:.write0_[j]", ioWriteSingle},
		{"Lsun/nio/ch/FileDispatcherImpl;::writev0", ioWriteGather},
		{"sun/nio/ch/FileDispatcherImpl.readv0_[i]", ioReadGather},
		{"sun.nio.ch.FileDispatcherImpl.read0", ioReadSingle},
		{"sun/nio/ch/SocketChannelImpl.write_[j]", ioWriteAny},
		{"sun/nio/ch/SocketChannelImpl.write(Ljava/nio/ByteBuffer;)I", ioWriteSingle},
		{"sun/nio/ch/IOUtil.write(Ljava/io/FileDescriptor;[Ljava/nio/ByteBuffer;IILsun/nio/ch/NativeDispatcher;)J", ioWriteGather},
		{"sun/nio/ch/IOUtil.read(java.io.FileDescriptor, java.nio.ByteBuffer, long, sun.nio.ch.NativeDispatcher)", ioReadSingle},
		// Kernel and libc.
		{"sys_writev", ioWriteGather},
		{"__x64_sys_write_[k]", ioWriteSingle},
		{"ksys_read", ioReadSingle},
		{"do_readv_[k]", ioReadGather},
		// Look-alikes.
		{"native_write_msr_safe", ioNone},
		{"tcp_write_xmit", ioNone},
		{"vfs_write", ioNone},
		{"io/netty/buffer/AbstractByteBuf:.writeBytes_[j]", ioNone},
		{"write_[x]", ioWriteSingle},
		{"main.write", ioNone},
	} {
		if got := classifyFrame(tc.name); got != tc.want {
			t.Errorf("classifyFrame(%q) = %d, want %d", tc.name, got, tc.want)
		}
	}
}
