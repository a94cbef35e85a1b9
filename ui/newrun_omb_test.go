package ui

import (
	"net/url"
	"strings"
	"testing"
)

// TestOMBFormSection: the OMB files' field errors show beside the
// file's box, each named, and a submitted driver comes back with its
// secrets redacted, the rest as typed.
func TestOMBFormSection(t *testing.T) {
	driver := "commonConfig: |\n  bootstrap.servers=k:9092\n  sasl.jaas.config=x required username=\"u\" password=\"pw-123\";\n  ssl.key.password = also-secret\n"
	v := NewRunForm(url.Values{"workload": {"e2e"}, FieldOMBDriver: {driver}},
		map[string]string{"omb-workload.topics": "line 3: must be at least 1", "omb-driver.replicationFactor": "must be given", "omb-driver": "holds a list"})
	var workload, drv *FormField
	for si := range v.Sections {
		for fi := range v.Sections[si].Fields {
			switch f := &v.Sections[si].Fields[fi]; f.Name {
			case FieldOMBWorkload:
				workload = f
			case FieldOMBDriver:
				drv = f
			}
		}
	}
	if workload == nil || drv == nil {
		t.Fatal("the form has no OMB fields")
	}
	if strings.Join(workload.Errors, "|") != "topics: line 3: must be at least 1" {
		t.Errorf("workload errors %q", workload.Errors)
	}
	if strings.Join(drv.Errors, "|") != "holds a list|replicationFactor: must be given" {
		t.Errorf("driver errors %q", drv.Errors)
	}
	if strings.Contains(drv.Value, "pw-123") || strings.Contains(drv.Value, "also-secret") ||
		!strings.Contains(drv.Value, `password="[redacted]"`) || !strings.Contains(drv.Value, "  bootstrap.servers=k:9092\n") {
		t.Errorf("driver shown as %q", drv.Value)
	}
	for _, e := range v.Errors {
		if strings.HasPrefix(e.Field, "omb-workload.") || strings.HasPrefix(e.Field, "omb-driver.") {
			t.Errorf("summary names %s apart from its file's box", e.Field)
		}
	}
}
