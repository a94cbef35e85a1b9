// Package kafkasec turns the usual Kafka client security properties
// (security.protocol, sasl.*, ssl.*) into connection settings for
// github.com/segmentio/kafka-go: a *kafka.Dialer or *kafka.Transport with
// TLS and SASL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) configured.
//
// Secrets (the SASL password and an inline private key) are never
// marshalled to JSON, never printed by fmt or log/slog, never included in
// an error message, and Redact hides them in property maps.
//
// Properties read by FromProperties (see Keys) and what they map to:
//
//	security.protocol                      Config.Protocol (default PLAINTEXT, any case)
//	sasl.mechanism                         Config.Mechanism; required with SASL_* (Kafka's
//	                                       default GSSAPI is not available in kafka-go)
//	sasl.jaas.config                       username/password of one PlainLoginModule or
//	                                       ScramLoginModule entry
//	sasl.username, sasl.password           kbench extension, alternative to the JAAS text
//	KBENCH_SASL_USERNAME/_PASSWORD (env)   used only when no property gives that value
//	ssl.truststore.type                    PEM or unset; JKS/PKCS12 are rejected
//	ssl.truststore.location                Config.CAFile (PEM file)
//	ssl.truststore.certificates            Config.CAPEM (inline PEM)
//	ssl.keystore.type                      PEM or unset; JKS/PKCS12 are rejected
//	ssl.keystore.location                  Config.CertFile and KeyFile (one PEM file, key + chain)
//	ssl.keystore.certificate.chain         Config.CertPEM (inline)
//	ssl.keystore.key                       Config.KeyPEM (inline, unencrypted)
//	ssl.ca.location                        Config.CAFile          (librdkafka name)
//	ssl.ca.pem                             Config.CAPEM           (librdkafka name)
//	ssl.certificate.location               Config.CertFile        (librdkafka name)
//	ssl.certificate.pem                    Config.CertPEM         (librdkafka name)
//	ssl.key.location                       Config.KeyFile         (librdkafka name)
//	ssl.key.pem                            Config.KeyPEM          (librdkafka name)
//	ssl.endpoint.identification.algorithm  https or absent: verify chain and host name;
//	                                       empty (or none): Config.SkipHostnameVerification,
//	                                       the chain is still verified
//	enable.ssl.certificate.verification    false: Config.InsecureSkipVerify, nothing is
//	                                       verified (librdkafka name)
//	ssl.server.name                        Config.ServerName (kbench extension: SNI and the
//	                                       name verified)
//	ssl.key.password, ssl.keystore.password, ssl.truststore.password
//	                                       rejected: encrypted keys and store passwords are
//	                                       not supported with PEM (Kafka also rejects the
//	                                       store passwords for PEM)
package kafkasec

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/kbench/kbench/internal/rundoc"
)

// Protocol is a Kafka security.protocol value.
type Protocol string

// The security protocols Kafka defines, all of which are supported.
const (
	Plaintext     Protocol = "PLAINTEXT"
	SSL           Protocol = "SSL"
	SASLPlaintext Protocol = "SASL_PLAINTEXT"
	SASLSSL       Protocol = "SASL_SSL"
)

// Protocols lists the supported security.protocol values.
var Protocols = []Protocol{Plaintext, SSL, SASLPlaintext, SASLSSL}

// UsesTLS reports whether connections are wrapped in TLS.
func (p Protocol) UsesTLS() bool { return p == SSL || p == SASLSSL }

// UsesSASL reports whether connections authenticate with SASL.
func (p Protocol) UsesSASL() bool { return p == SASLPlaintext || p == SASLSSL }

// Mechanism is a SASL mechanism name as in Kafka's sasl.mechanism.
type Mechanism string

// The SASL mechanisms kafka-go implements and this package supports.
// (Kafka's default, GSSAPI, and OAUTHBEARER are not available in kafka-go.)
const (
	Plain       Mechanism = "PLAIN"
	ScramSHA256 Mechanism = "SCRAM-SHA-256"
	ScramSHA512 Mechanism = "SCRAM-SHA-512"
)

// Mechanisms lists the supported sasl.mechanism values.
var Mechanisms = []Mechanism{Plain, ScramSHA256, ScramSHA512}

// Redacted is what secrets are replaced with in printed output.
const Redacted = rundoc.Redacted

// Config is the connection security of a Kafka client. The zero value is
// PLAINTEXT without authentication.
//
// Password and KeyPEM are secrets: they carry json:"-" and are hidden by
// String, GoString, Format (every fmt verb) and LogValue.
type Config struct {
	// Protocol is security.protocol; "" means PLAINTEXT.
	Protocol Protocol `json:"protocol,omitempty"`

	// Mechanism is sasl.mechanism; required when Protocol uses SASL.
	Mechanism Mechanism `json:"mechanism,omitempty"`
	// Username and Password are the SASL credentials.
	Username string `json:"username,omitempty"`
	Password string `json:"-"`

	// CAFile is a PEM file of CA certificates that sign the brokers'
	// certificates; CAPEM is the same inline. With neither, the system
	// roots are used.
	CAFile string `json:"caFile,omitempty"`
	CAPEM  string `json:"caPEM,omitempty"`

	// CertFile is a PEM file with the client certificate chain (leaf
	// first); it may also hold the private key, in which case KeyFile may
	// be the same path or empty. CertPEM is the chain inline.
	CertFile string `json:"certFile,omitempty"`
	CertPEM  string `json:"certPEM,omitempty"`
	// KeyFile is a PEM file with the client's unencrypted private key;
	// KeyPEM is the key inline (a secret).
	KeyFile string `json:"keyFile,omitempty"`
	KeyPEM  string `json:"-"`

	// ServerName, if set, is the name sent in SNI and checked against the
	// broker certificate instead of the host being dialled.
	ServerName string `json:"serverName,omitempty"`

	// SkipHostnameVerification still verifies the broker's certificate
	// chain against the CAs but not that it names the host. This is what
	// Kafka's ssl.endpoint.identification.algorithm= (empty) means.
	SkipHostnameVerification bool `json:"skipHostnameVerification,omitempty"`

	// InsecureSkipVerify accepts any broker certificate: neither chain nor
	// host name are checked (librdkafka's
	// enable.ssl.certificate.verification=false). For tests only.
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`

	// names says, when FromProperties built the Config, which property
	// each TLS field came from, for messages; fromProps marks it.
	names     sourceNames
	fromProps bool
	// untypedCA and untypedKeystore are the store type properties left
	// unset beside a store location (Kafka would assume JKS): Load then
	// accepts the file only if it is PEM, saying so.
	untypedCA, untypedKeystore string
	// caData, certData and keyData are the files' contents once Load has
	// read them, so no dial reads a file again; keyData is a secret.
	caData, certData, keyData string
	loaded                    bool
}

func (c Config) protocol() Protocol {
	if c.Protocol == "" {
		return Plaintext
	}
	return c.Protocol
}

// String describes c without secrets: the password and an inline key show
// as [redacted], inline certificates only by size.
func (c Config) String() string {
	var parts []string
	add := func(k, v string) { parts = append(parts, k+"="+v) }
	add("protocol", string(c.protocol()))
	if c.Mechanism != "" {
		add("mechanism", string(c.Mechanism))
	}
	if c.Username != "" {
		add("username", strconv.Quote(c.Username))
	}
	if c.Password != "" {
		add("password", Redacted)
	}
	if c.CAFile != "" {
		add("caFile", strconv.Quote(c.CAFile))
	}
	if c.CAPEM != "" {
		add("caPEM", fmt.Sprintf("<%d bytes>", len(c.CAPEM)))
	}
	if c.CertFile != "" {
		add("certFile", strconv.Quote(c.CertFile))
	}
	if c.CertPEM != "" {
		add("certPEM", fmt.Sprintf("<%d bytes>", len(c.CertPEM)))
	}
	if c.KeyFile != "" {
		add("keyFile", strconv.Quote(c.KeyFile))
	}
	if c.KeyPEM != "" {
		add("keyPEM", Redacted)
	}
	if c.ServerName != "" {
		add("serverName", strconv.Quote(c.ServerName))
	}
	if c.SkipHostnameVerification {
		add("skipHostnameVerification", "true")
	}
	if c.InsecureSkipVerify {
		add("insecureSkipVerify", "true")
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// GoString is used by %#v; it redacts like String.
func (c Config) GoString() string { return "kafkasec.Config" + c.String() }

// Format makes every fmt verb (%v, %+v, %s, %d, %x, ...) print the redacted
// String, and %#v the redacted GoString, so no verb can reach the fields.
func (c Config) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = f.Write([]byte(c.GoString()))
		return
	}
	_, _ = f.Write([]byte(c.String()))
}

// LogValue makes log/slog print the redacted String.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }
