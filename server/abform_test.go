package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

// TestNewRunFormConfigurations: the new-run form adds configurations to
// compare (without JavaScript, by a round trip that starts nothing), and
// submits them as an A/B submission: each added configuration is the
// form's options with the ones it lists changed, the runs are queued
// interleaved, and the user lands on their comparison. Bad fields of an
// added configuration are shown beside it.
func TestNewRunFormConfigurations(t *testing.T) {
	ts := newRunningTestServer(t, nil)
	held := ts.holdQueue(t)
	fresh := ts.do(t, "GET", "/runs/new", "").Body.String()
	for _, want := range []string{`id="section-configs"`, `name="add_config"`, `<template id="config-template">`} {
		if !strings.Contains(fresh, want) {
			t.Errorf("fresh form lacks %s", want)
		}
	}
	if strings.Contains(fresh, `name="configs[1].label"`) {
		t.Error("fresh form already has an added configuration")
	}
	base := url.Values{"workload": {"producer"}, "label": {"A"}, "num-records": {"100"}, "profile": {"none"},
		"producer-props": {"acks=all\nlinger.ms=5"}, "repetitions": {"2"}}

	// Without JavaScript: the button posts the form, which comes back with
	// a configuration more and every value kept.
	form := cloneValues(base)
	form.Set("add_config", "1")
	rec := ts.formPost(t, "/runs", form)
	if body := rec.Body.String(); rec.Code != http.StatusOK || !strings.Contains(body, `name="configs[1].label"`) ||
		!strings.Contains(body, `name="configs[1].params"`) || !strings.Contains(body, `id="f-num-records" name="num-records" value="100"`) {
		t.Fatalf("add a configuration = %d\n%s", rec.Code, body)
	}
	form.Del("add_config")
	form.Set("configs[1].label", "B")
	form.Set("remove_config", "1")
	if body := ts.formPost(t, "/runs", form).Body.String(); strings.Contains(body, `name="configs[1].label"`) {
		t.Error("remove did not remove the configuration")
	}
	if n, _ := ts.st.CountRuns(t.Context()); n != 0 {
		t.Fatalf("adding or removing a configuration started %d runs", n)
	}

	// Bad fields: A's label is missing, B's options hold a bad line and a
	// bad value, C repeats B's label.
	bad := cloneValues(base)
	bad.Set("label", "")
	bad.Set("configs[1].label", "B")
	bad.Set("configs[1].params", "record-size=64\nthroughput=fast\nnot a setting")
	bad.Set("configs[2].label", "B")
	rec = ts.formPost(t, "/runs", bad)
	body := rec.Body.String()
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("bad configurations = %d", rec.Code)
	}
	for _, want := range []string{`id="f-label-error"`, `id="f-configs-1-params-error"`, "line 3", "throughput:", `id="f-configs-2-label-error"`,
		`href="#f-configs-1-params"`, `record-size=64`} {
		if !strings.Contains(body, want) {
			t.Errorf("the form with bad configurations lacks %s", want)
		}
	}
	if n, _ := ts.st.CountRuns(t.Context()); n != 0 {
		t.Fatalf("invalid configurations started %d runs", n)
	}

	// Good: B changes the record size and one property.
	good := cloneValues(base)
	good.Set("configs[1].label", "B")
	good.Set("configs[1].params", "# smaller records\nrecord-size=64\nproducer-props=linger.ms=0\n")
	good.Set("configs[2].label", "") // a blank one is no configuration
	rec = ts.formPost(t, "/runs", good)
	loc := rec.Header().Get("Location")
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(loc, "/compare?") {
		t.Fatalf("A/B form = %d %q\n%s", rec.Code, loc, rec.Body)
	}
	u, _ := url.Parse(loc)
	ids, err := parseRunIDs([]string{u.Query().Get("runs")})
	if err != nil || u.Query().Get("by") != "group" || len(ids) != 4 {
		t.Fatalf("redirect to %q", loc)
	}
	var labels []string
	var order []uint
	list, _, _ := ts.st.ListRuns(t.Context(), store.RunFilter{})
	slices.Reverse(list)
	for _, r := range list {
		labels = append(labels, r.Label)
		order = append(order, r.ID)
		full, _ := ts.st.GetRun(t.Context(), r.ID)
		spec := full.Spec
		switch r.Label {
		case "A":
			if !strings.Contains(spec, `"record-size":512`) || !strings.Contains(spec, `"linger.ms":"5"`) {
				t.Errorf("A's spec %s", spec)
			}
		case "B":
			if !strings.Contains(spec, `"record-size":64`) || !strings.Contains(spec, `"linger.ms":"0"`) || !strings.Contains(spec, `"acks":"all"`) ||
				!strings.Contains(spec, `"num-records":100`) {
				t.Errorf("B's spec %s: want A's with record-size 64 and linger.ms 0", spec)
			}
		}
	}
	if !slices.Equal(labels, []string{"A", "B", "B", "A"}) {
		t.Errorf("runs %v, want A B B A", labels)
	}
	if got := held.order(ts); !slices.Equal(got, order) {
		t.Errorf("queue order %v, want %v", got, order)
	}
	ts.cancelAll(t, []apiRun{{ID: order[0]}, {ID: order[1]}, {ID: order[2]}, {ID: order[3]}})
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}

// FuzzOverrideParams: whatever an added configuration's options box
// holds, overrideParams never fails but on bad lines (named under the
// field with their line numbers), keeps base's options it does not name,
// and gives each name=value line's option its value.
func FuzzOverrideParams(f *testing.F) {
	for _, s := range []string{"record-size=64", "# c\n\nproducer-props=acks=1\nproducer-props=linger.ms=0", "--throughput=-1", "=x",
		"no equals", "a=b=c\r\nb = c ", "producer-props=", "producer-props==", "\x00=\xff"} {
		f.Add(s)
	}
	base := map[string]json.RawMessage{"num-records": json.RawMessage(`"100"`), "producer-props": json.RawMessage(`["acks=all","linger.ms=5"]`)}
	f.Fuzz(func(t *testing.T, text string) {
		out, err := overrideParams(base, text, "configs[1].params")
		if err != nil {
			var fe rundoc.FieldErrors
			if !errors.As(err, &fe) || len(fe) != 1 || fe[0].Field != "configs[1].params" || !strings.Contains(fe[0].Msg, "line ") {
				t.Fatalf("overrideParams(%q): error %v, want one naming the field and a line", text, err)
			}
		}
		named := map[string]string{}
		for _, line := range strings.Split(text, "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			if name, value, ok := strings.Cut(strings.TrimPrefix(line, "--"), "="); ok && strings.TrimSpace(name) != "" {
				named[strings.TrimSpace(name)] = strings.TrimSpace(value)
			}
		}
		for k, v := range base {
			if _, ok := named[k]; !ok && string(out[k]) != string(v) {
				t.Fatalf("overrideParams(%q) changed %s: %s", text, k, out[k])
			}
		}
		for name, value := range named {
			if name == "producer-props" {
				var props []string
				var kv string
				b, _ := json.Marshal(value) // as the form's own fields are sent
				json.Unmarshal(b, &kv)
				if err := json.Unmarshal(out[name], &props); err != nil || !slices.Contains(props, kv) {
					t.Fatalf("overrideParams(%q): producer-props %s lacks %q", text, out[name], value)
				}
				continue
			}
			// As the form's own fields: a JSON string of the value.
			if want, _ := json.Marshal(value); string(out[name]) != string(want) {
				t.Fatalf("overrideParams(%q): %s = %s, want %s", text, name, out[name], want)
			}
		}
	})
}
