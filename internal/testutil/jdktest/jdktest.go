// Package jdktest gives tests the JDK on PATH: the one door through which
// tests reach a JVM (java, javac, jfr), so that each follows the same two
// rules. Under go test -short it fails the test (tier.RefuseTest): a test
// that starts a JVM is an integration test and must skip first. Without a
// JDK it skips, unless KBENCH_REQUIRE_JDK=1 (test.sh installs a JDK and
// sets it), when it fails.
package jdktest

import (
	"os"
	"testing"

	"github.com/kbench/kbench/internal/jdk"
	"github.com/kbench/kbench/internal/testutil/tier"
)

// EnvRequire set to 1 makes a missing JDK fail the tests instead of
// skipping them.
const EnvRequire = "KBENCH_REQUIRE_JDK"

// Find returns the JDK on PATH (jdk.Find("")). It fails t under -short,
// and skips it without a JDK (fails it under EnvRequire=1).
func Find(t testing.TB) jdk.JDK {
	t.Helper()
	tier.RefuseTest(t, "a JVM (jdktest.Find)")
	j, err := jdk.Find("")
	if err != nil {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("%s=1 but %v", EnvRequire, err)
		}
		t.Skipf("no JDK (set %s=1 to fail instead): %v", EnvRequire, err)
	}
	return j
}
