package acceptance

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/testutil/tier"
)

// TestBinary runs the built binary the way users do: one producer run on
// the embedded broker, then an interrupted run, checking that SIGINT
// writes partial results and takes the broker child process down too.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := e2eKbench(t)

	t.Run("producer", func(t *testing.T) {
		out := t.TempDir()
		cmd := exec.Command(bin, "run", "producer", "--num-records", "20000", "--record-size", "128", "--out", out,
			"--meta", "commit=abc123", "--meta=branch=trunk")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("kbench run producer: %v\n%s", err, stderr.String())
		}
		if !regexp.MustCompile(`^20000 records sent, `).MatchString(stdout.String()) {
			t.Errorf("stdout is not Kafka's output alone:\n%s", stdout.String())
		}
		var res struct {
			Complete    bool `json:"complete"`
			Meta        map[string]string
			Profiles    []struct{ Role, Kind, File string }
			Environment struct {
				KafkaGoVersion string `json:"kafka_go_version"`
				Config         *struct {
					Mode string `json:"mode"`
				} `json:"config"`
				Target *struct {
					Kind string `json:"kind"`
				} `json:"target"`
			} `json:"environment"`
		}
		data, err := os.ReadFile(filepath.Join(out, "result.json"))
		if err != nil {
			t.Fatal(err)
		}
		json.Unmarshal(data, &res)
		if !res.Complete || len(res.Profiles) != 3 { // client cpu, heap and broker cpu
			t.Errorf("complete=%v profiles=%+v, want complete with client cpu+heap and broker cpu", res.Complete, res.Profiles)
		}
		if want := map[string]string{"commit": "abc123", "branch": "trunk", "version": "v0.4.51"}; !maps.Equal(res.Meta, want) {
			t.Errorf("meta %v, want %v (version: the build's kafka-go)", res.Meta, want)
		}
		env := res.Environment
		if env.KafkaGoVersion != "v0.4.51" || env.Config == nil || env.Config.Mode != "raw" || env.Target == nil || env.Target.Kind != "embedded" {
			t.Errorf("environment: kafka-go %q, config %+v, target %+v; want v0.4.51 from the build, mode raw, the embedded broker",
				env.KafkaGoVersion, env.Config, env.Target)
		}
	})

	t.Run("sigint", func(t *testing.T) {
		out := t.TempDir()
		cmd := exec.Command(bin, "run", "producer", "--num-records", "1000000", "--throughput", "2000", "--reporting-interval", "200", "--out", out)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		// Interrupt once the run is measuring: Kafka's first interval line
		// ("N records sent, ...") is on stdout.
		stdout := &watchWriter{want: " records sent, ", seen: make(chan struct{})}
		cmd.Stdout = stdout
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-stdout.seen:
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no interval line on stdout within a minute\n%s", stderr.String())
		}
		cmd.Process.Signal(os.Interrupt)
		err := cmd.Wait()
		if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 {
			t.Fatalf("interrupted run: %v, want exit code 1\n%s", err, stderr.String())
		}
		var res struct {
			Complete bool   `json:"complete"`
			Error    string `json:"error"`
		}
		data, err := os.ReadFile(filepath.Join(out, "result.json"))
		if err != nil {
			t.Fatalf("no partial result: %v\n%s", err, stderr.String())
		}
		json.Unmarshal(data, &res)
		if res.Complete || res.Error == "" {
			t.Errorf("result complete=%v error=%q, want incomplete with a reason", res.Complete, res.Error)
		}
		m := regexp.MustCompile(`\(pid (\d+)\)`).FindStringSubmatch(stderr.String())
		if m == nil {
			t.Fatalf("no broker pid in stderr:\n%s", stderr.String())
		}
		pid, _ := strconv.Atoi(m[1])
		deadline := time.Now().Add(10 * time.Second)
		for syscall.Kill(pid, 0) == nil {
			if time.Now().After(deadline) {
				t.Fatalf("broker child %d still running after the run exited", pid)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

// watchWriter keeps what a child process writes and closes seen once it
// holds want: an event to wait on instead of a sleep.
type watchWriter struct {
	want string
	seen chan struct{}
	mu   sync.Mutex
	buf  bytes.Buffer
	done bool
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return len(p), nil
	}
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.done = true
		close(w.seen)
	}
	return len(p), nil
}

// TestServeRefusesForeignDatabase: `kbench serve` on a data directory
// whose kbench.db holds another application's schema exits 1 with a
// message saying so, and leaves the file exactly as it was.
func TestServeRefusesForeignDatabase(t *testing.T) {
	tier.Integration(t, "builds and starts kbench")
	bin := e2eKbench(t)
	data := t.TempDir()
	path := filepath.Join(data, "kbench.db")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"PRAGMA journal_mode=DELETE", "CREATE TABLE runs(id text primary key, foo blob)", "INSERT INTO runs VALUES ('a', x'00')"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--data", data)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("kbench serve started on a foreign database\n%s", stderr.String())
	}
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 {
		t.Errorf("kbench serve: %v, want exit status 1", err)
	}
	for _, want := range []string{"not a kbench database", "table runs", "foo", "nothing was changed"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q does not say %q", stderr.String(), want)
		}
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fi2, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(after, before) || !fi2.ModTime().Equal(fi.ModTime()) {
		t.Error("kbench serve changed the foreign database")
	}
	ents, _ := os.ReadDir(data)
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("data directory holds %v, want only kbench.db", names)
	}
}

// TestServeRetain: `kbench serve` with KBENCH_RETAIN=30 deletes, at start,
// a finished run that ended 31 days ago with its files, keeps one that
// ended yesterday, and logs how many it pruned.
func TestServeRetain(t *testing.T) {
	tier.Integration(t, "builds and starts kbench")
	bin := e2eKbench(t)
	data := t.TempDir()
	st, err := store.Open(filepath.Join(data, "kbench.db"))
	if err != nil {
		t.Fatal(err)
	}
	old, recent := time.Now().Add(-31*24*time.Hour), time.Now().Add(-24*time.Hour)
	runs := []*store.Run{
		{Label: "old", Status: rundoc.StatusSucceeded, CreatedAt: old, FinishedAt: &old},
		{Label: "recent", Status: rundoc.StatusSucceeded, CreatedAt: recent, FinishedAt: &recent},
	}
	if err := st.CreateRuns(context.Background(), runs); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, r := range runs {
		dir := filepath.Join(data, "runs", strconv.FormatUint(uint64(r.ID), 10))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "result.json"), []byte("{}"), 0o644)
	}

	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--data", data)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "KBENCH_RETAIN=30"}
	var stdout, stderr e2eBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for !e2eServingLine.MatchString(stdout.String()) {
		select {
		case err := <-exited:
			t.Fatalf("kbench serve exited: %v\n%s", err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("kbench serve did not start\n%s", stderr.String())
		}
	}
	cmd.Process.Signal(os.Interrupt)
	if err := <-exited; err != nil {
		t.Errorf("kbench serve after SIGINT: %v", err)
	}
	if !regexp.MustCompile(`msg="pruned runs" older_than_days=30 count=1`).MatchString(stderr.String()) {
		t.Errorf("log does not say one run was pruned:\n%s", stderr.String())
	}
	st, err = store.Open(filepath.Join(data, "kbench.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i, r := range runs {
		_, err := st.GetRun(context.Background(), r.ID)
		_, ferr := os.Stat(filepath.Join(data, "runs", strconv.FormatUint(uint64(r.ID), 10)))
		if pruned := i == 0; pruned != (err != nil) || pruned != os.IsNotExist(ferr) {
			t.Errorf("run %q: store %v, files %v; want it pruned=%v", r.Label, err, ferr, pruned)
		}
	}
}

// TestServeHostCheck starts the real `kbench serve` on loopback without a
// token: it answers loopback names and the --allow-host (flag and
// KBENCH_ALLOW_HOST) names, and refuses any other Host (DNS rebinding).
func TestServeHostCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := e2eKbench(t)
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--data", t.TempDir(), "--allow-host", "kbench.test")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KBENCH_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "KBENCH_ALLOW_HOST=other.test, third.test")
	var stdout, stderr e2eBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}()
	var base string
	for deadline := time.Now().Add(30 * time.Second); base == ""; time.Sleep(20 * time.Millisecond) {
		if m := e2eServingLine.FindStringSubmatch(stdout.String()); m != nil {
			base = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("kbench serve printed no address\nstderr: %s", stderr.String())
		}
	}
	client := e2eHTTPClient()
	for _, tt := range []struct {
		host string
		want int
	}{
		{"", 200}, // the address itself: 127.0.0.1:PORT
		{"localhost", 200},
		{"kbench.test", 200},
		{"other.test", 200},
		{"third.test", 200},
		{"rebind.attacker.example", 403},
		{"127.evil.invalid", 403},
	} {
		req, err := http.NewRequest("GET", base+"/api/runs", nil)
		if err != nil {
			t.Fatal(err)
		}
		if tt.host != "" {
			req.Host = tt.host + ":8080"
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("Host %q: %d %s, want %d", tt.host, resp.StatusCode, body, tt.want)
		}
	}
}
