package jfr_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/kbench/kbench/internal/jdk"
	"github.com/kbench/kbench/internal/testutil/jdktest"
	"github.com/kbench/kbench/internal/testutil/tier"
	"github.com/kbench/kbench/profiles"
	"github.com/kbench/kbench/profiles/jfr"
)

// findJDK returns the JDK on PATH, or skips the test when there is none,
// unless KBENCH_REQUIRE_JDK=1 (./test.sh installs one and sets it); it
// fails the test under -short (jdktest.Find).
func findJDK(t *testing.T) jdk.JDK {
	t.Helper()
	return jdktest.Find(t)
}

// recordings are the two recordings of testdata/WriteLoop.java the tests
// make, once per test binary: 1.5 s of each mode, both JVMs at once,
// with kbench's settings (jfr.Settings).
var recordings struct {
	once  sync.Once
	files map[string]string // mode → .jfr
	err   error
	dir   string
}

func record(t *testing.T, j jdk.JDK) map[string]string {
	t.Helper()
	recordings.once.Do(func() {
		dir, err := os.MkdirTemp("", "kbench-jfr-test-")
		if err != nil {
			recordings.err = err
			return
		}
		recordings.dir = dir
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if out, err := exec.CommandContext(ctx, j.Javac, "-d", dir, filepath.Join("testdata", "WriteLoop.java")).CombinedOutput(); err != nil {
			recordings.err = &cmdErr{"javac", err, out}
			return
		}
		settings := filepath.Join(dir, "kbench.jfc")
		if err := os.WriteFile(settings, []byte(jfr.Settings()), 0o644); err != nil {
			recordings.err = err
			return
		}
		modes := []string{"gather", "per-buffer"}
		files := map[string]string{}
		errs := make([]error, len(modes))
		var wg sync.WaitGroup
		for i, mode := range modes {
			file := filepath.Join(dir, mode+".jfr")
			files[mode] = file
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.CommandContext(ctx, j.Java, "-XX:StartFlightRecording=filename="+file+",settings="+settings,
					"-cp", dir, "WriteLoop", mode, "1500")
				if out, err := cmd.CombinedOutput(); err != nil {
					errs[i] = &cmdErr{"java WriteLoop " + mode, err, out}
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				recordings.err = err
				return
			}
		}
		recordings.files = files
	})
	if recordings.err != nil {
		t.Fatal(recordings.err)
	}
	return recordings.files
}

func TestMain(m *testing.M) {
	code := m.Run()
	if recordings.dir != "" {
		os.RemoveAll(recordings.dir)
	}
	os.Exit(code)
}

type cmdErr struct {
	what string
	err  error
	out  []byte
}

func (e *cmdErr) Error() string { return e.what + ": " + e.err.Error() + "\n" + string(e.out) }

// summaryCounts reads the event counts `jfr summary` prints, an
// independent count of the recording's samples.
func summaryCounts(t *testing.T, j jdk.JDK, file string) map[string]int64 {
	t.Helper()
	out, err := exec.Command(j.JFR, "summary", file).Output()
	if err != nil {
		t.Fatalf("jfr summary: %v", err)
	}
	counts := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && strings.HasPrefix(f[0], "jdk.") {
			if n, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				counts[f[0]] = n
			}
		}
	}
	return counts
}

// frames lists the function names of the samples of p labelled state.
func frames(p *profile.Profile, state string) map[string]bool {
	names := map[string]bool{}
	for _, s := range p.Sample {
		if s.Label[jfr.LabelState][0] != state {
			continue
		}
		for _, l := range s.Location {
			for _, ln := range l.Line {
				names[ln.Function.Name] = true
			}
		}
	}
	return names
}

func hasSuffix(names map[string]bool, prefix, suffix string) bool {
	for n := range names {
		if strings.HasPrefix(n, prefix) && strings.HasSuffix(n, suffix) {
			return true
		}
	}
	return false
}

// TestFromRecording: a JVM writing to a loopback socket with one gathering
// write per round shows writev0 in its native samples; one writing each
// buffer on its own shows sun.nio.ch write frames and no writev0; the
// profile holds exactly the samples `jfr summary` counts, and the
// write-path panel reads the shapes from the converted profiles.
func TestFromRecording(t *testing.T) {
	tier.Integration(t, "starts a JVM")
	j := findJDK(t)
	files := record(t, j)
	wantPath := map[string]string{"gather": "gather", "per-buffer": "single"}
	for _, mode := range []string{"gather", "per-buffer"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel() // each runs the jfr tool twice: a JVM's start-up each time
			p, sum, err := jfr.FromRecording(context.Background(), j.JFR, files[mode])
			if err != nil {
				t.Fatal(err)
			}
			counts := summaryCounts(t, j, files[mode])
			if sum.Execution != counts[jfr.ExecutionSample] || sum.Native != counts[jfr.NativeMethodSample] {
				t.Errorf("converted %+v; jfr summary counts %d execution, %d native samples",
					sum, counts[jfr.ExecutionSample], counts[jfr.NativeMethodSample])
			}
			var total int64
			for _, s := range p.Sample {
				total += s.Value[0]
			}
			if total != sum.Samples() || total == 0 {
				t.Errorf("profile holds %d samples, summary %d", total, sum.Samples())
			}
			native := frames(p, jfr.StateNative)
			all := frames(p, jfr.StateRunning)
			for n := range native {
				all[n] = true
			}
			if !all["sun.nio.ch.IOUtil.write"] || !all["sun.nio.ch.SocketChannelImpl.write"] || !all["WriteLoop.main"] {
				t.Errorf("no sun.nio.ch.IOUtil.write, SocketChannelImpl.write or WriteLoop.main frames in %v", keys(all))
			}
			gather := hasSuffix(all, "sun.nio.ch.", ".writev0")
			switch mode {
			case "gather":
				if !hasSuffix(native, "sun.nio.ch.", ".writev0") {
					t.Errorf("gather: no writev0 in the native samples %v", keys(native))
				}
			case "per-buffer":
				if gather {
					t.Errorf("per-buffer: writev0 among %v", keys(all))
				}
				if !hasSuffix(native, "sun.nio.ch.", ".write0") {
					t.Errorf("per-buffer: no write0 in the native samples %v", keys(native))
				}
			}
			rep := profiles.WritePaths(p, 0)
			var top profiles.WritePathRow
			for _, r := range rep.Rows {
				if r.Direction == "write" && r.Value > top.Value {
					top = r
				}
			}
			if top.Path != wantPath[mode] {
				t.Errorf("write-path panel: the largest write row is %+v; want path %s (rows %+v)", top, wantPath[mode], rep.Rows)
			}
		})
	}
}

// TestSettings: a recording made with jfr.Settings holds the two sample
// events and none of the others JFR can record (its own metadata and
// constant pools aside).
func TestSettings(t *testing.T) {
	tier.Integration(t, "starts a JVM")
	j := findJDK(t)
	for mode, file := range record(t, j) {
		counts := summaryCounts(t, j, file)
		if counts[jfr.NativeMethodSample] == 0 {
			t.Errorf("%s: no %s events in the recording (%v)", mode, jfr.NativeMethodSample, counts)
		}
		for name, n := range counts {
			if n > 0 && name != jfr.ExecutionSample && name != jfr.NativeMethodSample && name != "jdk.Metadata" && name != "jdk.CheckPoint" {
				t.Errorf("%s: the recording holds %d %s events", mode, n, name)
			}
		}
	}
}

// TestFromRecordingRefusedUnderShort: in a test binary run with -short
// (simulated), FromRecording is a door of the tier guard: it panics with
// tier.Refused before it starts the jfr tool.
func TestFromRecordingRefusedUnderShort(t *testing.T) {
	tier.SetShort(t, true)
	var msg string
	func() {
		defer func() {
			if p := recover(); p != nil {
				msg = fmt.Sprint(p)
			}
		}()
		_, _, err := jfr.FromRecording(context.Background(), "jfr", filepath.Join(t.TempDir(), "none.jfr"))
		t.Errorf("FromRecording under -short returned %v instead of panicking", err)
	}()
	if !strings.Contains(msg, tier.Refused) {
		t.Errorf("FromRecording under -short panicked with %q, want %q", msg, tier.Refused)
	}
}

// TestFromRecordingFails: a file that is not a recording gives the jfr
// tool's complaint, not an empty profile.
func TestFromRecordingFails(t *testing.T) {
	tier.Integration(t, "starts a JVM")
	j := findJDK(t)
	bad := filepath.Join(t.TempDir(), "bad.jfr")
	if err := os.WriteFile(bad, []byte("not a recording"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, _, err := jfr.FromRecording(context.Background(), j.JFR, bad)
	if err == nil {
		t.Fatalf("converted %d samples from a file that is no recording", len(p.Sample))
	}
	if !strings.Contains(err.Error(), "bad.jfr") {
		t.Errorf("error %q does not name the file", err)
	}
	t.Log(err)
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
