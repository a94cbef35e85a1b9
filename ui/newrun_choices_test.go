package ui

import (
	"net/url"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/kafkasec"
	"github.com/kbench/kbench/internal/rundoc"
)

func optionValues(f FormField) []string {
	var out []string
	for _, o := range f.Options {
		out = append(out, o.Value)
	}
	return out
}

// TestNewRunFormChoices: every flag with a closed set of values is a
// select of exactly the runner's values (behind a "default" choice), and
// the security selects list what kafkasec supports: one list for the CLI,
// the API and the form.
func TestNewRunFormChoices(t *testing.T) {
	fields := formFields(NewRunForm(nil, nil))
	n := 0
	for _, f := range FormFlags() {
		if len(f.Choices) == 0 {
			continue
		}
		n++
		ff := fields[f.Name]
		want := []string{""}
		for _, c := range f.Choices {
			want = append(want, c.Value)
		}
		if ff.Kind != "select" || strings.Join(optionValues(ff), ",") != strings.Join(want, ",") {
			t.Errorf("%s: kind %s, options %q; want a select of %q", f.Name, ff.Kind, optionValues(ff), want)
		}
		if ff.Options[0].Label == "" || !strings.HasPrefix(ff.Options[0].Label, "default (") {
			t.Errorf("%s: first option %+v, want the default named", f.Name, ff.Options[0])
		}
	}
	for _, name := range []string{"strategy", "acks", "mode"} {
		if fields[name].Kind != "select" {
			t.Errorf("%s is a %s, want a select", name, fields[name].Kind)
		}
	}
	if n < 3 {
		t.Errorf("%d flags have choices, want at least strategy, acks and mode", n)
	}
	if got := fields["strategy"].Options[0].Label; got != "default (gather)" {
		t.Errorf("strategy default option %q", got)
	}
	if got := fields["mode"].Options[0].Label; got != "default (producer: raw, consumer: group, e2e: kafka, or rate with a positive throughput)" {
		t.Errorf("mode default option %q", got)
	}
	var protocols, mechanisms []string
	for _, p := range kafkasec.Protocols {
		protocols = append(protocols, string(p))
	}
	for _, m := range kafkasec.Mechanisms {
		mechanisms = append(mechanisms, string(m))
	}
	if got := optionValues(fields["security-protocol"]); strings.Join(got, ",") != strings.Join(protocols, ",") {
		t.Errorf("security-protocol options %q, want kafkasec's %q", got, protocols)
	}
	if got := optionValues(fields["sasl-mechanism"]); strings.Join(got, ",") != strings.Join(mechanisms, ",") {
		t.Errorf("sasl-mechanism options %q, want kafkasec's %q", got, mechanisms)
	}
	// A value kept from a submit stays selected.
	kept := formFields(NewRunForm(url.Values{"workload": {"writepath"}, "strategy": {"copy"}, "acks": {"1"}}, nil))
	for name, want := range map[string]string{"strategy": "copy", "acks": "1"} {
		if got := checked(kept[name]); got != want {
			t.Errorf("%s selected %q, want %q", name, got, want)
		}
	}
}

// TestNewRunFormCountLabels: the producer's (and e2e's) count is --num-records and the
// consumer's --messages, as Kafka's tools name them.
func TestNewRunFormCountLabels(t *testing.T) {
	fields := formFields(NewRunForm(nil, nil))
	if f := fields["num-records"]; f.Label != "num-records" || f.Workloads != string(rundoc.Producer)+" "+string(rundoc.E2E) {
		t.Errorf("num-records: label %q, workloads %q; want the producer's and e2e's", f.Label, f.Workloads)
	}
	f, ok := fields["messages"]
	// The form's default is a timed run, not the CLI's count: no count is
	// shown as the default.
	if !ok || f.Label != "messages" || f.Workloads != string(rundoc.Consumer) || f.Kind != "number" || f.Placeholder != "" {
		t.Errorf("messages field = %+v, want the consumer's count, empty by default", f)
	}
}

// TestNewRunFormTargetFields: the cluster fields say when they apply, for
// new_run.js to disable them while the embedded broker is chosen (and the
// SASL ones unless a SASL protocol is), and not otherwise.
func TestNewRunFormTargetFields(t *testing.T) {
	fields := formFields(NewRunForm(nil, nil))
	for name, want := range map[string]string{
		"bootstrap-server":  "target=bootstrap",
		"security-protocol": "target=bootstrap",
		"sasl-mechanism":    "target=bootstrap security-protocol=SASL_PLAINTEXT|SASL_SSL",
		"sasl-username":     "target=bootstrap security-protocol=SASL_PLAINTEXT|SASL_SSL",
		"sasl-password":     "target=bootstrap security-protocol=SASL_PLAINTEXT|SASL_SSL",
		"target":            "",
		"label":             "",
	} {
		if got := fields[name].EnabledWhen; got != want {
			t.Errorf("%s enabled when %q, want %q", name, got, want)
		}
	}
}

// TestNewRunFormKeepsAnUnknownChoice: a value outside the choices (only a
// hand-made request sends one) is shown selected, not silently replaced.
func TestNewRunFormKeepsAnUnknownChoice(t *testing.T) {
	f := formFields(NewRunForm(url.Values{"workload": {"writepath"}, "strategy": {"sideways"}}, map[string]string{"strategy": "bad"}))["strategy"]
	if got := checked(f); got != "sideways" {
		t.Errorf("strategy selected %q, want the value sent, sideways", got)
	}
	f = formFields(NewRunForm(url.Values{"workload": {"writepath"}, "acks": {"-1"}}, nil))["acks"]
	if got := checked(f); got != "all" || len(f.Options) != 3 {
		t.Errorf("acks -1 selects %q among %d options, want all (its synonym) among 3", got, len(f.Options))
	}
}

// TestNewRunFormKeepsNonFiniteText: a refused NaN or Infinity is shown as
// sent, in a text input (a number input would blank it).
func TestNewRunFormKeepsNonFiniteText(t *testing.T) {
	for _, v := range []string{"NaN", "Infinity", "-inf", "1e400"} {
		f := formFields(NewRunForm(url.Values{"workload": {"producer"}, "throughput": {v}}, map[string]string{"throughput": "bad"}))["throughput"]
		if f.Kind != "text" || f.Value != v {
			t.Errorf("throughput %q renders as %s holding %q, want text holding it", v, f.Kind, f.Value)
		}
	}
}
