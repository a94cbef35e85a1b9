package lifecycle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/testutil/tier"
	"github.com/kbench/kbench/internal/toolcatalog"
)

// TestToolRunClassPropsNeedTheWorkersFlag: a Kafka tool's run whose
// properties make the Java client load a class fails unstarted on a
// worker without --allow-tool-class-props, whatever the server that
// queued it allowed (the worker runs the tool); with it, it runs.
func TestToolRunClassPropsNeedTheWorkersFlag(t *testing.T) {
	tier.Integration(t, "starts kbench run stand-ins")
	path := filepath.Join(t.TempDir(), "kafka-producer-perf-test.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tools, err := toolcatalog.Parse([]string{"prod=" + path})
	if err != nil {
		t.Fatal(err)
	}
	const spec = `{"workload":"producer","params":{"tool":"prod","num-records":100,"profile":"none","bootstrap-server":"127.0.0.1:9092",` +
		`"producer-props":{"config.providers":"file","linger.ms":"5"}}}`
	for _, allow := range []bool{false, true} {
		e := newEnv(t, "succeed", func(o *Options) { o.Tools, o.AllowToolClassProps = tools, allow })
		id := e.create(t, spec)
		w := e.watch(t, e.Manager, id)
		e.submit(t, e.Manager, id, nil)
		w.until(t, "done")
		r := e.get(t, id)
		refused := r.Status == rundoc.StatusFailed && strings.Contains(r.Error, "config.providers") && strings.Contains(r.Error, "--allow-tool-class-props")
		if refused == allow {
			t.Errorf("--allow-tool-class-props %v: run %s %q", allow, r.Status, r.Error)
		}
	}
}
