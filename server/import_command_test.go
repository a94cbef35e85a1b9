package server

import (
	"encoding/json"
	"fmt"
	"html"
	"strings"
	"testing"
)

// TestImportCommandLine: the "command" field of an import keeps the
// command line that printed the output, split as a shell would and its
// secrets replaced; comparisons read it: an import that gives its record
// size beside one that does not show the record size as unknown, and say
// why. A command of another tool, an unclosed quote or a command without
// output are 400s on the field.
func TestImportCommandLine(t *testing.T) {
	ts := newTestServer(t, nil)
	output := readImportFile(t, "producer_summary.txt")
	command := `bin/kafka-producer-perf-test.sh --topic bench --num-records 500000 --record-size 1024 --throughput -1 \
  --producer-props bootstrap.servers=b1:9092 acks=1 "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"s3cret\";"`
	with := decodeRun(t, ts.importOutput(t, "with.txt", output, nil, map[string]string{"label": "java-1k", "command": command}))
	without := decodeRun(t, ts.importOutput(t, "without.txt", output, nil, map[string]string{"label": "java-unknown"}))

	full := ts.getRun(t, with.ID)
	var meas struct{ Command []string }
	json.Unmarshal(full.Measurement, &meas)
	if len(meas.Command) != 13 || meas.Command[0] != "bin/kafka-producer-perf-test.sh" || meas.Command[6] != "1024" || !strings.Contains(meas.Command[12], "[redacted]") {
		t.Errorf("stored command %q", meas.Command)
	}
	if raw, _ := json.Marshal(full); strings.Contains(string(raw), "s3cret") {
		t.Error("the command's password reached the store")
	}

	page := ts.do(t, "GET", fmt.Sprintf("/compare?runs=%d,%d", with.ID, without.ID), "")
	body := html.UnescapeString(page.Body.String())
	for _, w := range []string{"Not like for like", "<th scope=\"row\">record-size</th><td>1024</td><td>unknown</td>",
		"<th scope=\"row\">acks</th><td>1</td><td>unknown</td>",
		fmt.Sprintf("Run #%d's record size, record count and acks are unknown (imported without a command line).", without.ID)} {
		if !strings.Contains(body, w) {
			t.Errorf("comparison lacks %q", w)
		}
	}

	for _, tt := range []struct{ name, command, output, msg string }{
		{"another tool", "bin/kafka-consumer-perf-test.sh --messages 10", string(output), "runs kafka-consumer-perf-test, but the output is kafka-producer-perf-test's"},
		{"no tool", "ls -l", string(output), "names none of Kafka's perf tools"},
		{"unclosed quote", `bin/kafka-producer-perf-test.sh --topic "t`, string(output), "a double quote is not closed"},
		{"no output", "bin/kafka-producer-perf-test.sh --record-size 10", "", "only with the output"},
	} {
		var out []byte
		if tt.output != "" {
			out = []byte(tt.output)
		}
		rec := ts.importOutput(t, "x.txt", out, nil, map[string]string{"label": "x", "command": tt.command})
		var a struct{ Error, Field string }
		json.Unmarshal(rec.Body.Bytes(), &a)
		if rec.Code != 400 || a.Field != "command" || !strings.Contains(a.Error, tt.msg) {
			t.Errorf("%s: %d %+v, want 400 on command saying %q", tt.name, rec.Code, a, tt.msg)
		}
	}
}
