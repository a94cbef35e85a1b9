package childproc

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/testutil/tier"
)

// TestStartRefusedUnderShort: in a test binary run with -short (simulated
// here by setting the test.short flag), Start is the tier guard's door: it
// panics with tier.Refused and starts nothing, so an integration test
// that forgot to skip fails instead of starting a run or a broker.
func TestStartRefusedUnderShort(t *testing.T) {
	tier.SetShort(t, true)

	cmd := exec.Command("true")
	var msg string
	func() {
		defer func() {
			if p := recover(); p != nil {
				msg = fmt.Sprint(p)
			}
		}()
		err := Start(cmd)
		t.Errorf("Start under -short returned %v instead of panicking", err)
	}()
	if !strings.Contains(msg, tier.Refused) || !strings.Contains(msg, "childproc.Start "+cmd.Path) {
		t.Errorf("Start under -short panicked with %q, want it to name %q and say %q", msg, "childproc.Start "+cmd.Path, tier.Refused)
	}
	if cmd.Process != nil {
		t.Errorf("Start under -short started pid %d", cmd.Process.Pid)
	}
}
