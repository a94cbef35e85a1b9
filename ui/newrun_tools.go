package ui

import (
	"net/url"
	"strings"
)

// FieldTool is the new-run form's tool field (POST /api/runs "tool").
const FieldTool = "tool"

// ToolChoice is a Kafka tool the new-run form offers (serve's or a
// worker's --tool NAME=PATH): its name, which of Kafka's tools it is
// (Script, e.g. kafka-producer-perf-test.sh) and the workload it runs,
// and the queues whose workers offer it (nil on a server whose store no
// other worker shares).
type ToolChoice struct {
	Name, Script, Workload string
	Queues                 []string
}

func (c ToolChoice) label() string {
	l := c.Name + ": Kafka's " + c.Script + " (" + c.Workload + ")"
	switch len(c.Queues) {
	case 0:
		return l
	case 1:
		return l + ", queue " + c.Queues[0]
	}
	return l + ", queues " + strings.Join(c.Queues, ", ")
}

// AddToolField adds the tool field to the form's Run section, after the
// workload, when there are tools to offer: a select of them by name,
// first kbench's own client. The submitted value is kept (marked when it
// is not among the choices: a worker that offered it may have stopped).
// The form sends only a name: the tool's arguments come from the run's
// fields, filled into its kind's template by the machine that runs it.
func (v *NewRunFormView) AddToolField(values url.Values, tools []ToolChoice, errs map[string]string) {
	if len(tools) == 0 {
		return
	}
	value := strings.TrimSpace(values.Get(FieldTool))
	names := []string{""}
	labels := map[string]string{"": "kbench's client (kafka-go)"}
	for _, t := range tools {
		names = append(names, t.Name)
		labels[t.Name] = t.label()
	}
	if !contains(names, value) {
		names = append(names, value)
		labels[value] = value + " (not one of the choices)"
	}
	options := choiceOptions(names, labels, value)
	for i, t := range tools {
		options[i+1].Queues = strings.Join(t.Queues, " ")
	}
	f := FormField{Name: FieldTool, Label: "Tool", Kind: "select", Value: value, Options: options,
		Help: "run Kafka's own tool instead of kbench's client: one this server or a queue's workers offer (--tool NAME=PATH). " +
			"Its arguments are filled from this form's fields (topic, counts, sizes, throughput, properties) and its bootstrap server is the target, " +
			"a Kafka cluster; fields its tool does not take are left out. Choose the tool's workload above"}
	v.insertRunField(f, FieldWorkload, errs)
}
