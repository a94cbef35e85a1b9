package launch

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

func TestTargetField(t *testing.T) {
	for msg, want := range map[string]string{
		`kafkasec: security.protocol=SASL_SSL needs sasl.mechanism (Kafka defaults to GSSAPI)`:                  "sasl-mechanism",
		`kafkasec: security.protocol=SASL_SSL with PLAIN needs a username: set sasl.jaas.config, sasl.username`: "sasl-username",
		`kafkasec: security.protocol=SASL_SSL with PLAIN needs a password: set sasl.jaas.config, sasl.password`: "sasl-password",
		`kafkasec: security.protocol "TLS" is not supported; supported: PLAINTEXT, SSL`:                         "security-protocol",
		`kafkasec: sasl.mechanism "X" is not supported; supported: PLAIN`:                                       "sasl-mechanism",
		`kafkasec: sasl.username is set but security.protocol=SSL does not use SASL`:                            "sasl-username",
		`unsupported property "linger"`: "",
	} {
		if got := targetField(msg); got != want {
			t.Errorf("targetField(%q) = %q, want %q", msg, got, want)
		}
	}
}

// tinyParams are a producer run's params, never executed here.
func tinyParams(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	var p map[string]json.RawMessage
	if err := json.Unmarshal([]byte(`{"num-records":100,"record-size":10,"profile":["none"]}`), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLaunchRunLimits: a request queuing more runs than one request may
// is a field error on "repetitions"; one that would take the queues past
// their limit is ErrQueueFull; neither stores a run. Within the limits
// the warm-up runs and repetitions are stored and submitted in order,
// one repetition group.
func TestLaunchRunLimits(t *testing.T) {
	l := newTestLauncher(t, func(o *Options) { o.MaxRunsPerRequest, o.MaxQueuedRuns = 4, 5 })
	create := func(reps, warmups int) ([]*store.Run, error) {
		req := Request{Workload: "producer", Label: "x", Repetitions: reps, WarmupRuns: warmups, Params: tinyParams(t)}
		spec, err := l.Prepare(&req)
		if err != nil {
			t.Fatalf("prepare: %v", err)
		}
		return l.CreateRuns(t.Context(), req, spec)
	}
	if _, err := create(4, 1); fieldOf(err) != "repetitions" {
		t.Errorf("5 runs for a limit of 4 per request: %v, want a field error on repetitions", err)
	}
	runs, err := create(3, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 4 || !runs[0].Warmup || runs[1].GroupIndex != 1 || runs[3].GroupIndex != 3 || runs[1].GroupID == "" || runs[1].GroupID != runs[3].GroupID {
		t.Errorf("runs %+v, want a warm-up run, then repetitions 1 to 3 of one group", runs)
	}
	if got := l.runs.queued(); !slices.Equal(got, []uint{runs[0].ID, runs[1].ID, runs[2].ID, runs[3].ID}) {
		t.Errorf("submitted %v, want the runs in order", got)
	}
	if _, err := create(2, 0); !errors.Is(err, ErrQueueFull) || err.Error() == ErrQueueFull.Error() {
		t.Errorf("4 queued + 2 for a limit of 5: %v, want ErrQueueFull saying how many", err)
	}
	if n, _ := l.st.CountRuns(t.Context()); n != 4 {
		t.Errorf("%d runs stored, want the 4 admitted", n)
	}
}

// TestLaunchTargetPolicy: the target policy (Options.Allowed) judges a
// request's bootstrap server: refused, it is a field error naming the
// target's field, also when the policy's refusal is a plain error.
func TestLaunchTargetPolicy(t *testing.T) {
	l := newTestLauncher(t, nil)
	req := Request{Workload: "producer", Params: tinyParams(t), Target: &Target{BootstrapServer: "10.1.2.3:9092"}}
	if _, err := l.Prepare(&req); fieldOf(err) != "bootstrap-server" {
		t.Errorf("a target the policy refuses: %v, want a field error on bootstrap-server", err)
	}
	req = Request{Workload: "producer", Params: tinyParams(t), Target: &Target{BootstrapServer: "127.0.0.1:9092"}}
	if _, err := l.Prepare(&req); err != nil {
		t.Errorf("a target the policy allows: %v", err)
	}
	l = newTestLauncher(t, func(o *Options) {
		o.Allowed = func(addrs []string) error { return errors.New(addrs[0] + " is not on the list") }
	})
	req = Request{Workload: "producer", Params: tinyParams(t), Target: &Target{BootstrapServer: "127.0.0.1:9092"}}
	var fe *rundoc.FieldError
	if _, err := l.Prepare(&req); !errors.As(err, &fe) || fe.Field != "bootstrap-server" || fe.Msg != "127.0.0.1:9092 is not on the list" {
		t.Errorf("a plain refusal: %v, want it on bootstrap-server", err)
	}
}
