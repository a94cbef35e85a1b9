package jfr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/kbench/kbench/internal/tailbuf"
	"github.com/kbench/kbench/internal/testutil/tier"
)

// PrintArgs are the arguments FromRecording gives the jfr tool before the
// recording's path. jfr print cuts stacks at 5 frames unless told
// otherwise (without marking them truncated); 2048 is the deepest stack
// a JVM records.
var PrintArgs = []string{"print", "--json", "--stack-depth", "2048", "--events", ExecutionSample + "," + NativeMethodSample}

// FromRecording converts the recording at path (a .jfr file) with the
// JDK's jfr tool (jfrTool, its path: jdk.Find's JDK.JFR), streaming the
// tool's output into Convert. The error quotes the end of the tool's
// stderr when it fails. It starts a JVM, so in a test binary run with
// -short it panics (tier.Refuse) and starts nothing.
func FromRecording(ctx context.Context, jfrTool, path string) (*profile.Profile, Summary, error) {
	return FromRecordingWith(ctx, jfrTool, path, Options{})
}

// FromRecordingWith is FromRecording converting with opts (ConvertWith).
func FromRecordingWith(ctx context.Context, jfrTool, path string, opts Options) (*profile.Profile, Summary, error) {
	tier.Refuse("jfr.FromRecording " + jfrTool)
	cmd := exec.CommandContext(ctx, jfrTool, append(append([]string(nil), PrintArgs...), path)...)
	stderr := tailbuf.New(2048)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, Summary{}, fmt.Errorf("jfr: print %s: %w", path, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, Summary{}, fmt.Errorf("jfr: print %s: %w", path, err)
	}
	p, sum, convErr := ConvertWith(out, opts)
	if convErr != nil {
		// Stop the tool rather than wait for it to print what nobody reads.
		_ = cmd.Process.Kill()
	}
	_, _ = io.Copy(io.Discard, out)
	waitErr := cmd.Wait()
	if waitErr != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, Summary{}, fmt.Errorf("jfr: print %s: %w", path, ctxErr)
		}
		if convErr == nil || !errors.Is(convErr, ErrTooLarge) {
			msg := strings.TrimSpace(stderr.String())
			if msg != "" {
				return nil, Summary{}, fmt.Errorf("jfr: print %s: %w: %s", path, waitErr, msg)
			}
			return nil, Summary{}, fmt.Errorf("jfr: print %s: %w", path, waitErr)
		}
	}
	if convErr != nil {
		return nil, Summary{}, fmt.Errorf("jfr: print %s: %w", path, convErr)
	}
	return p, sum, nil
}
