package rundoc

// What the command line of one of Kafka's perf tools says about the run:
// read for comparability, so that an imported Java run and a kbench run
// are compared on record size, record count and acks when the command is
// known (`kbench exec`, tool runs, an import's "command" field).

import (
	"errors"
	"path/filepath"
	"strings"
)

// Kafka's perf tools, as ToolCommandSettings recognises them by a word
// of the command line.
const (
	toolProducerPerf = "kafka-producer-perf-test"
	toolConsumerPerf = "kafka-consumer-perf-test"
	toolE2ELatency   = "kafka-e2e-latency"
	// toolShareConsumerPerf is KIP-932's share group consumer (Kafka 4.1+).
	toolShareConsumerPerf = "kafka-share-consumer-perf-test"
)

// commandTool finds the word of argv naming one of Kafka's perf tools
// (its script, or its class as an argument of java or
// kafka-run-class.sh) and returns the tool and the arguments after it.
func commandTool(argv []string) (tool string, args []string) {
	for i, a := range argv {
		switch b := strings.ToLower(filepath.Base(a)); {
		// The share consumer's names hold the consumer's: it goes first.
		case strings.Contains(b, "share-consumer-perf-test"), strings.Contains(b, "shareconsumerperformance"):
			return toolShareConsumerPerf, argv[i+1:]
		case strings.Contains(b, "producer-perf-test"), strings.Contains(b, "producerperformance"):
			return toolProducerPerf, argv[i+1:]
		case strings.Contains(b, "consumer-perf-test"), strings.Contains(b, "consumerperformance"):
			return toolConsumerPerf, argv[i+1:]
		case strings.Contains(b, "e2e-latency"), strings.Contains(b, "endtoendlatency"):
			return toolE2ELatency, argv[i+1:]
		}
	}
	return "", nil
}

// ToolCommandTool is the Kafka perf tool a command line runs
// ("kafka-producer-perf-test", "kafka-consumer-perf-test",
// "kafka-share-consumer-perf-test", "kafka-e2e-latency"), "" when it names
// none.
func ToolCommandTool(argv []string) string {
	tool, _ := commandTool(argv)
	return tool
}

// ToolCommandSettings reads the settings a command line of Kafka's
// kafka-producer-perf-test, kafka-consumer-perf-test or EndToEndLatency
// gives, under the names kbench's runs record them: num-records
// (--num-records, --messages), record-size, throughput, warmup-records,
// payload (a --payload-file), and client properties under their Kafka
// names (--producer-props and --command-property pairs, acks -1 read as
// all; the consumer's --fetch-size as max.partition.fetch.bytes, the share
// consumer's as fetch.max.bytes; the consumer's
// auto.offset.reset, which the tool sets from --from-latest). Connection
// and secret properties are left out: they are no setting of the
// workload. Properties files (--producer.config, --command-config) are
// not read: what they hold is unknown. nil when argv runs none of the
// tools.
func ToolCommandSettings(argv []string) []Setting {
	tool, args := commandTool(argv)
	if tool == "" {
		return nil
	}
	var out []Setting
	set := func(name, value string) {
		if name == "acks" && value == "-1" {
			value = "all" // one setting, however the command spelled it
		}
		for i := range out {
			if out[i].Name == name {
				out[i].Value = value
				return
			}
		}
		out = append(out, Setting{Name: name, Value: value})
	}
	prop := func(kv string) bool {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.HasPrefix(k, "-") {
			return false
		}
		switch {
		case k == "bootstrap.servers", k == "client.id", k == "group.id", k == "transactional.id",
			strings.HasPrefix(k, "sasl."), strings.HasPrefix(k, "ssl."), k == "security.protocol":
			return true
		}
		set(k, v)
		return true
	}
	if tool == toolE2ELatency && len(args) >= 5 && !strings.HasPrefix(args[0], "-") {
		// broker_list topic num_messages producer_acks message_size_bytes
		// [properties_file], what every version takes.
		set("num-records", args[2])
		set("acks", args[3])
		set("record-size", args[4])
		return out
	}
	fromLatest := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(a, "=")
		if !strings.HasPrefix(name, "--") {
			continue
		}
		next := func() (string, bool) {
			if hasValue {
				return value, true
			}
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
				i++
				return args[i], true
			}
			return "", false
		}
		switch name {
		case "--num-records", "--messages":
			if v, ok := next(); ok {
				set("num-records", v)
			}
		case "--record-size":
			if v, ok := next(); ok {
				set("record-size", v)
			}
		case "--throughput":
			if v, ok := next(); ok {
				set("throughput", v)
			}
		case "--warmup-records":
			if v, ok := next(); ok {
				set("warmup-records", v)
			}
		case "--payload-file":
			if v, ok := next(); ok {
				set("payload", "file "+v)
			}
		case "--producer-acks":
			if v, ok := next(); ok {
				set("acks", v)
			}
		case "--fetch-size":
			if v, ok := next(); ok {
				if tool == toolShareConsumerPerf {
					set("fetch.max.bytes", v) // what the share tool sets
				} else {
					set("max.partition.fetch.bytes", v)
				}
			}
		case "--from-latest":
			fromLatest = true
		case "--producer-props", "--command-property":
			if hasValue {
				prop(value)
			}
			// Its values run to the next option.
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") && prop(args[i+1]) {
				i++
			}
		}
	}
	if tool == toolConsumerPerf {
		v := "earliest"
		if fromLatest {
			v = "latest"
		}
		set("auto.offset.reset", v)
	}
	return out
}

// SplitCommandLine splits a command line as a POSIX shell would for a
// plain command: words at blanks, single and double quotes, backslash
// escapes, and a backslash-newline continuing the line. It expands
// nothing (no variables, globs or substitutions) and refuses what it
// cannot split: an unterminated quote.
func SplitCommandLine(s string) ([]string, error) {
	var words []string
	var b strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && s[i+1] == '\n':
			i++
		case c == '\\' && i+1 < len(s):
			b.WriteByte(s[i+1])
			inWord = true
			i++
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("a single quote is not closed")
			}
			b.WriteString(s[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '"':
			inWord = true
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
					if s[i+1] != '\n' {
						b.WriteByte(s[i+1])
					}
					i++
					continue
				}
				b.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("a double quote is not closed")
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inWord {
				words = append(words, b.String())
				b.Reset()
				inWord = false
			}
		default:
			b.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, b.String())
	}
	return words, nil
}
