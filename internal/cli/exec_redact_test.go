package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/testutil/tier"
)

// TestExecRedactsConfigFileAndKbenchSecrets runs kbench exec in process
// on a command given --producer.config=FILE (the = form), which prints
// the file and its environment's KBENCH_* secrets, against a server that
// cannot be reached, so the result stays on disk: the file's password is
// in neither the stored command, output, error nor notes, and the command
// never saw KBENCH_TOKEN or KBENCH_DATABASE.
func TestExecRedactsConfigFileAndKbenchSecrets(t *testing.T) {
	tier.Integration(t, "starts a tool process")
	const filePW, token, dbPW = "file-secret-pw-1", "kbench-token-value-1", "db-url-pw-1"
	cfg := filepath.Join(t.TempDir(), "producer.properties")
	if err := os.WriteFile(cfg, []byte("security.protocol=SASL_SSL\nsasl.password="+filePW+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KBENCH_TOKEN", token)
	t.Setenv("KBENCH_DATABASE", "postgres://kbench:"+dbPW+"@db/kbench")
	t.Setenv("KBENCH_SERVER", "")
	t.Setenv("TMPDIR", t.TempDir()) // where the kept result goes
	script := `echo "token=${KBENCH_TOKEN:-unset} database=${KBENCH_DATABASE:-unset}"; cat "${1#--producer.config=}"; ` +
		`cat "${1#--producer.config=}" >&2; echo "$1 $2" >&2; exit 1`
	var stdout, stderr bytes.Buffer
	code := cmdExec(context.Background(), []string{"--server", "http://127.0.0.1:1", "--label", "redact", "--jfr=false", "--",
		"sh", "-c", script, "sh", "--producer.config=" + cfg, "pw=" + filePW}, &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit %d, stderr %s", code, stderr.String())
	}
	m := regexp.MustCompile(`its result stays in (\S+) `).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no kept result in stderr %q", stderr.String())
	}
	res, err := rundoc.ReadResult(m[1])
	if err != nil {
		t.Fatal(err)
	}
	stored := strings.Join(res.Measurement.Command, " ") + "\n" + res.Output + "\n" + res.Error + "\n" + strings.Join(res.Measurement.Notes, "\n")
	for _, text := range []string{stored, stdout.String(), stderr.String()} {
		for _, secret := range []string{filePW, token, dbPW} {
			if strings.Contains(text, secret) {
				t.Errorf("%q holds %q", text, secret)
			}
		}
	}
	if !strings.Contains(res.Output, "token=unset database=unset") {
		t.Errorf("the command saw kbench's secrets: output %q", res.Output)
	}
	if !strings.Contains(res.Output, "sasl.password="+rundoc.Redacted) || !strings.Contains(strings.Join(res.Measurement.Command, " "), "--producer.config="+cfg+" pw="+rundoc.Redacted) {
		t.Errorf("stored command %q, output %q", res.Measurement.Command, res.Output)
	}
}
