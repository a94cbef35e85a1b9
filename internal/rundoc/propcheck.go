package rundoc

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Checks of the names a request may give: Kafka properties and topics.
// Their values end up in a Kafka tool's command line (toolcatalog.Args)
// and in properties files, where a key such as "--producer.config" or a
// topic such as "-x" would be read as an option, and a line break as a
// new property; so they are refused wherever a spec is validated, not
// where it is used.

// MaxTopicLen is the longest topic name Kafka accepts.
const MaxTopicLen = 249

// CheckTopic reports why name is not a Kafka topic name, nil when it is
// one: Kafka's own rule, 1 to 249 of the characters [a-zA-Z0-9._-], and
// neither "." nor ".."; and, since a topic is an argument of Kafka's
// tools, not starting with '-'. The message never quotes name (it may hold line
// breaks or markup).
func CheckTopic(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("must not be empty")
	case len(name) > MaxTopicLen:
		return fmt.Errorf("is %d characters long; a Kafka topic name has at most %d", len(name), MaxTopicLen)
	case name == "." || name == "..":
		return fmt.Errorf("must not be \".\" or \"..\" (Kafka refuses them)")
	case name[0] == '-':
		return fmt.Errorf("must not start with '-': Kafka's tools would read it as an option")
	}
	for i := 0; i < len(name); i++ {
		if !topicByte(name[i]) {
			return fmt.Errorf("holds a character Kafka refuses in a topic name (at byte %d): use letters, digits, '.', '_' and '-' only", i+1)
		}
	}
	return nil
}

func topicByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

// MaxPropKeyLen bounds a property's name; Kafka's longest are under 60.
const MaxPropKeyLen = 255

// CheckPropKey reports why key is not a Java property name, nil when it
// is one: 1 to 255 bytes of printable UTF-8 without white space, not
// starting with '-' (a tool would read it as an option) and without '='
// or ':' (which end a key in a properties file and in key=value).
func CheckPropKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("a property has an empty name")
	case len(key) > MaxPropKeyLen:
		return fmt.Errorf("a property name is %d bytes long, longer than %d", len(key), MaxPropKeyLen)
	case !utf8.ValidString(key):
		return fmt.Errorf("a property name is not UTF-8 text")
	case key[0] == '-':
		return fmt.Errorf("property name %s starts with '-': a property is a Java property name such as linger.ms, never a command-line option", quoteKey(key))
	}
	for _, r := range key {
		switch {
		case r == '=' || r == ':':
			return fmt.Errorf("property name %s holds %q, which ends a property's name", quoteKey(key), r)
		case unicode.IsSpace(r) || !unicode.IsPrint(r):
			return fmt.Errorf("property name %s holds white space or a control character", quoteKey(key))
		}
	}
	return nil
}

// quoteKey quotes a property's name for a message, only when it is short
// printable text: the message names what was refused without echoing
// arbitrary input back.
func quoteKey(key string) string {
	if len(key) > 64 || strings.ContainsFunc(key, func(r rune) bool { return !unicode.IsPrint(r) || r == utf8.RuneError }) {
		return "(not shown)"
	}
	return fmt.Sprintf("%q", key)
}

// CheckPropValue reports why v may not be the value of property key, nil
// when it may: it must be UTF-8 text without control characters (a line
// break would start a new property in a properties file), except that
// the inline PEM properties, whose certificates span lines, may hold line
// breaks. It never quotes v, which may be a secret.
func CheckPropValue(key, v string) error {
	if !utf8.ValidString(v) {
		return fmt.Errorf("%s: the value is not UTF-8 text", quoteKey(key))
	}
	multiline := inlinePEMProps[key]
	for _, r := range v {
		if r == '\n' || r == '\r' {
			if multiline {
				continue
			}
			return fmt.Errorf("%s: the value holds a line break; a property's value is one line", quoteKey(key))
		}
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return fmt.Errorf("%s: the value holds a control character", quoteKey(key))
		}
	}
	return nil
}

// inlinePEMProps are the properties whose value is PEM text, which may
// span lines (Kafka's and librdkafka's names).
var inlinePEMProps = map[string]bool{
	"ssl.truststore.certificates": true, "ssl.keystore.certificate.chain": true, "ssl.keystore.key": true,
	"ssl.ca.pem": true, "ssl.certificate.pem": true, "ssl.key.pem": true,
}

// CheckProps checks every property of props, in name order, as
// CheckPropKey and CheckPropValue do, and returns the first error.
func CheckProps(props map[string]string) error {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := CheckPropKey(k); err != nil {
			return err
		}
		if err := CheckPropValue(k, props[k]); err != nil {
			return err
		}
	}
	return nil
}

// CheckGroup checks a consumer group's name: one line of at most
// MaxPropKeyLen characters, not starting with '-' (Kafka's tool would read
// it as an option).
func CheckGroup(g string) error {
	if strings.HasPrefix(g, "-") || strings.ContainsFunc(g, unicode.IsControl) || len(g) > MaxPropKeyLen {
		return fmt.Errorf("must be one line of at most %d characters, not starting with '-' (Kafka's tool would read it as an option)", MaxPropKeyLen)
	}
	return nil
}

// FileProp reports whether Kafka client property k names a file the
// client reads (a key store, a CA bundle, a key): a file on the machine
// that runs the client, which only a run's child ever opens.
func FileProp(k string) bool {
	return strings.HasSuffix(strings.ToLower(strings.TrimSpace(k)), ".location")
}

// ConfigFileProp reports whether k names a whole client configuration
// file rather than one property (producer.config, consumer.config,
// command.config, …): a request never gives one, as it would bring
// properties, the target among them, that no check has seen.
func ConfigFileProp(k string) bool {
	k = strings.ToLower(strings.TrimSpace(k))
	return strings.HasSuffix(k, ".config") && k != "sasl.jaas.config" || k == "config" || strings.HasSuffix(k, ".config.file")
}

// ClassProp reports whether Kafka client property k makes the Java
// client load classes or call out of the client: *.class, *.classes,
// config.providers (which read files and environment variables into
// other properties), metric.reporters, the serializers, the partition
// assignors, security.providers and Kerberos' kinit command. A Kafka
// tool's run takes them only where the operator allows it.
func ClassProp(k string) bool {
	k = strings.ToLower(strings.TrimSpace(k))
	switch {
	case strings.HasSuffix(k, ".class"), strings.HasSuffix(k, ".classes"),
		k == "config.providers", strings.HasPrefix(k, "config.providers."):
		return true
	}
	switch k {
	case "metric.reporters", "security.providers", "partition.assignment.strategy", "sasl.kerberos.kinit.cmd",
		"key.serializer", "value.serializer", "key.deserializer", "value.deserializer":
		return true
	}
	return false
}

// FirstClassProp is the first property of props, in name order, that
// ClassProp reports, "" for none.
func FirstClassProp(props map[string]string) string {
	first := ""
	for k := range props {
		if ClassProp(k) && (first == "" || k < first) {
			first = k
		}
	}
	return first
}
