package kafkasec

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

const (
	plainModule = "org.apache.kafka.common.security.plain.PlainLoginModule"
	scramModule = "org.apache.kafka.common.security.scram.ScramLoginModule"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestFromPropertiesSASL(t *testing.T) {
	t.Parallel()
	sasl := func(proto, mech string, kv ...string) map[string]string {
		m := map[string]string{PropSecurityProtocol: proto, PropSASLMechanism: mech}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name  string
		props map[string]string
		env   map[string]string
		want  Config
	}{
		{"empty is PLAINTEXT", map[string]string{}, nil, Config{Protocol: Plaintext}},
		{"env ignored without SASL", map[string]string{PropSecurityProtocol: "plaintext"},
			map[string]string{EnvSASLUsername: "u", EnvSASLPassword: "p"}, Config{Protocol: Plaintext}},
		{"PLAIN jaas", sasl("SASL_PLAINTEXT", "PLAIN", PropSASLJAASConfig,
			plainModule+` required username="alice" password="secret";`), nil,
			Config{Protocol: SASLPlaintext, Mechanism: Plain, Username: "alice", Password: "secret"}},
		{"lower case protocol and mechanism", sasl("sasl_plaintext", "scram-sha-512", PropSASLJAASConfig,
			scramModule+` required username="bob" password="pw";`), nil,
			Config{Protocol: SASLPlaintext, Mechanism: ScramSHA512, Username: "bob", Password: "pw"}},
		{"SCRAM jaas quoting and escapes", sasl("SASL_PLAINTEXT", "SCRAM-SHA-256", PropSASLJAASConfig,
			scramModule+` required username='b\'ob' password="p\"a\\ss; w=rd\101\x";`), nil,
			Config{Protocol: SASLPlaintext, Mechanism: ScramSHA256, Username: "b'ob", Password: "p\"a\\ss; w=rdAx"}},
		{"PLAIN jaas control escapes", sasl("SASL_PLAINTEXT", "PLAIN", PropSASLJAASConfig,
			plainModule+` required username="u" password="a\tb\nc\0d";`), nil,
			Config{Protocol: SASLPlaintext, Mechanism: Plain, Username: "u", Password: "a\tb\nc\x00d"}},
		{"jaas unquoted values, comments, extra options, no final semicolon, newlines",
			sasl("SASL_PLAINTEXT", "PLAIN", PropSASLJAASConfig, "  "+plainModule+" REQUIRED // the module\n"+
				"  /* user */ username=alice@corp.example\n  serviceName=kafka\n  password=s3cr3t!  "), nil,
			Config{Protocol: SASLPlaintext, Mechanism: Plain, Username: "alice@corp.example", Password: "s3cr3t!"}},
		{"shaded module name", sasl("SASL_PLAINTEXT", "PLAIN", PropSASLJAASConfig,
			`kafkashaded.org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b";`), nil,
			Config{Protocol: SASLPlaintext, Mechanism: Plain, Username: "a", Password: "b"}},
		{"sasl.username and sasl.password", sasl("SASL_SSL", "PLAIN", PropSASLUsername, " alice ", PropSASLPassword, "pw"), nil,
			Config{Protocol: SASLSSL, Mechanism: Plain, Username: "alice", Password: "pw"}},
		{"agreeing jaas and sasl.username", sasl("SASL_PLAINTEXT", "PLAIN", PropSASLUsername, "alice", PropSASLJAASConfig,
			plainModule+` required username="alice" password="pw";`), nil,
			Config{Protocol: SASLPlaintext, Mechanism: Plain, Username: "alice", Password: "pw"}},
		{"credentials from env", sasl("SASL_PLAINTEXT", "SCRAM-SHA-256"),
			map[string]string{EnvSASLUsername: "envuser", EnvSASLPassword: " env pw "},
			Config{Protocol: SASLPlaintext, Mechanism: ScramSHA256, Username: "envuser", Password: " env pw "}},
		{"properties win over env", sasl("SASL_PLAINTEXT", "PLAIN", PropSASLUsername, "propuser", PropSASLPassword, "proppw"),
			map[string]string{EnvSASLUsername: "envuser", EnvSASLPassword: "envpw"},
			Config{Protocol: SASLPlaintext, Mechanism: Plain, Username: "propuser", Password: "proppw"}},
		{"jaas wins over env", sasl("SASL_PLAINTEXT", "PLAIN", PropSASLJAASConfig, plainModule+` required username="j" password="jp";`),
			map[string]string{EnvSASLUsername: "envuser", EnvSASLPassword: "envpw"},
			Config{Protocol: SASLPlaintext, Mechanism: Plain, Username: "j", Password: "jp"}},
		{"jaas username, env password", sasl("SASL_PLAINTEXT", "PLAIN", PropSASLJAASConfig, plainModule+` required username="j";`),
			map[string]string{EnvSASLUsername: "envuser", EnvSASLPassword: "envpw"},
			Config{Protocol: SASLPlaintext, Mechanism: Plain, Username: "j", Password: "envpw"}},
		{"empty property counts as absent", sasl("SASL_PLAINTEXT", "PLAIN", PropSASLUsername, "u", PropSASLPassword, ""),
			map[string]string{EnvSASLPassword: "envpw"},
			Config{Protocol: SASLPlaintext, Mechanism: Plain, Username: "u", Password: "envpw"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromProperties(tc.props, envOf(tc.env))
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if exported(got) != tc.want {
				t.Errorf("got  %#v\nwant %#v", got, tc.want)
			}
			if got.Password != tc.want.Password {
				t.Errorf("password differs")
			}
		})
	}
}

func TestFromPropertiesNilEnv(t *testing.T) {
	t.Parallel()
	_, err := FromProperties(map[string]string{PropSecurityProtocol: "SASL_SSL", PropSASLMechanism: "PLAIN"}, nil)
	if err == nil || !strings.Contains(err.Error(), PropSASLUsername) {
		t.Fatalf("err = %v", err)
	}
}

type tlsFiles struct {
	ca, clientPEM, cert, key, jks, encKey, notPEM string
}

func writeTLSFiles(t *testing.T) tlsFiles {
	pki := newTestPKI(t)
	dir := t.TempDir()
	key, _ := os.ReadFile(pki.clientKey)
	enc := strings.ReplaceAll(string(key), "PRIVATE KEY", "ENCRYPTED PRIVATE KEY")
	return tlsFiles{
		ca: pki.caFile, clientPEM: pki.clientPEM, cert: pki.clientCert, key: pki.clientKey,
		jks:    writeFile(t, dir, "truststore.jks", []byte{0xFE, 0xED, 0xFE, 0xED, 0, 0, 0, 2}),
		encKey: writeFile(t, dir, "enc-key.pem", []byte(enc)),
		notPEM: writeFile(t, dir, "truststore.p12", []byte{0x30, 0x82, 0x01, 0x02}),
	}
}

func TestFromPropertiesTLS(t *testing.T) {
	t.Parallel()
	f := writeTLSFiles(t)
	caText, _ := os.ReadFile(f.ca)
	certText, _ := os.ReadFile(f.cert)
	keyText, _ := os.ReadFile(f.key)
	tests := []struct {
		name  string
		props map[string]string
		want  Config
	}{
		{"truststore PEM", map[string]string{PropSecurityProtocol: "SSL", PropTruststoreType: "PEM", PropTruststoreLocation: f.ca},
			Config{Protocol: SSL, CAFile: f.ca}},
		{"truststore location without type but PEM content", map[string]string{PropSecurityProtocol: "SSL", PropTruststoreLocation: f.ca},
			Config{Protocol: SSL, CAFile: f.ca}},
		{"inline truststore", map[string]string{PropSecurityProtocol: "SSL", PropTruststoreType: "pem", PropTruststoreCertificates: string(caText)},
			Config{Protocol: SSL, CAPEM: strings.TrimSpace(string(caText))}},
		{"keystore PEM file", map[string]string{PropSecurityProtocol: "SSL", PropKeystoreType: "PEM", PropKeystoreLocation: f.clientPEM},
			Config{Protocol: SSL, CertFile: f.clientPEM, KeyFile: f.clientPEM}},
		{"inline keystore chain and key", map[string]string{PropSecurityProtocol: "SSL", PropKeystoreType: "PEM",
			PropKeystoreChain: string(certText), PropKeystoreKey: string(keyText)},
			Config{Protocol: SSL, CertPEM: strings.TrimSpace(string(certText)), KeyPEM: strings.TrimSpace(string(keyText))}},
		{"librdkafka style locations", map[string]string{PropSecurityProtocol: "SSL", PropCALocation: f.ca,
			PropCertificateLocation: f.cert, PropKeyLocation: f.key},
			Config{Protocol: SSL, CAFile: f.ca, CertFile: f.cert, KeyFile: f.key}},
		{"certificate file holding the key too", map[string]string{PropSecurityProtocol: "SSL", PropCertificateLocation: f.clientPEM},
			Config{Protocol: SSL, CertFile: f.clientPEM}},
		{"endpoint identification https", map[string]string{PropSecurityProtocol: "SSL", PropEndpointIdentification: "HTTPS"},
			Config{Protocol: SSL}},
		{"endpoint identification empty", map[string]string{PropSecurityProtocol: "SASL_SSL", PropEndpointIdentification: " ",
			PropSASLMechanism: "PLAIN", PropSASLUsername: "u", PropSASLPassword: "p"},
			Config{Protocol: SASLSSL, Mechanism: Plain, Username: "u", Password: "p", SkipHostnameVerification: true}},
		{"endpoint identification none", map[string]string{PropSecurityProtocol: "SSL", PropEndpointIdentification: "none"},
			Config{Protocol: SSL, SkipHostnameVerification: true}},
		{"certificate verification off, server name", map[string]string{PropSecurityProtocol: "SSL",
			PropCertVerification: "false", PropServerName: "kafka.example"},
			Config{Protocol: SSL, InsecureSkipVerify: true, ServerName: "kafka.example"}},
		{"non-TLS ignores store types and verification flags", map[string]string{PropSecurityProtocol: "PLAINTEXT",
			PropTruststoreType: "JKS", PropEndpointIdentification: ""},
			Config{Protocol: Plaintext}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromProperties(tc.props, noEnv)
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if exported(got) != tc.want {
				t.Errorf("got  %#v\nwant %#v", got, tc.want)
			}
			if got.KeyPEM != tc.want.KeyPEM {
				t.Errorf("KeyPEM differs")
			}
			if tc.want.Protocol.UsesTLS() {
				if tc, err := got.TLSConfig(); err != nil || tc == nil {
					t.Errorf("TLSConfig() = %v, %v", tc, err)
				}
			}
		})
	}
}

func TestFromPropertiesErrors(t *testing.T) {
	t.Parallel()
	f := writeTLSFiles(t)
	const pw = "Hunter2-s3cret"
	saslWith := func(jaas string) map[string]string {
		return map[string]string{PropSecurityProtocol: "SASL_SSL", PropSASLMechanism: "PLAIN", PropSASLJAASConfig: jaas}
	}
	ssl := func(kv ...string) map[string]string {
		m := map[string]string{PropSecurityProtocol: "SSL"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name  string
		props map[string]string
		env   map[string]string
		want  []string // all must appear in the error
	}{
		{"unknown protocol", map[string]string{PropSecurityProtocol: "TLS"}, nil,
			[]string{PropSecurityProtocol, `"TLS"`, "PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"}},
		{"SASL without mechanism", map[string]string{PropSecurityProtocol: "SASL_SSL", PropSASLUsername: "u", PropSASLPassword: pw}, nil,
			[]string{PropSASLMechanism, "GSSAPI", "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512"}},
		{"GSSAPI", map[string]string{PropSecurityProtocol: "SASL_SSL", PropSASLMechanism: "GSSAPI"}, nil,
			[]string{"GSSAPI", "not supported by kafka-go", "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512"}},
		{"OAUTHBEARER", map[string]string{PropSecurityProtocol: "SASL_SSL", PropSASLMechanism: "OAUTHBEARER"}, nil,
			[]string{"OAUTHBEARER", "not supported"}},
		{"unknown mechanism", map[string]string{PropSecurityProtocol: "SASL_SSL", PropSASLMechanism: "SCRAM-SHA-1"}, nil,
			[]string{PropSASLMechanism, `"SCRAM-SHA-1"`, "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512"}},
		{"no username", map[string]string{PropSecurityProtocol: "SASL_SSL", PropSASLMechanism: "PLAIN", PropSASLPassword: pw}, nil,
			[]string{"username", PropSASLJAASConfig, PropSASLUsername, EnvSASLUsername}},
		{"no password", map[string]string{PropSecurityProtocol: "SASL_PLAINTEXT", PropSASLMechanism: "SCRAM-SHA-256", PropSASLUsername: "u"}, nil,
			[]string{"password", PropSASLPassword, EnvSASLPassword}},
		{"jaas without control flag", saslWith(plainModule + ` username="u" password="` + pw + `";`), nil,
			[]string{PropSASLJAASConfig, "offset", "control flag"}},
		{"jaas unterminated quote", saslWith(plainModule + ` required username="u" password="` + pw + `;`), nil,
			[]string{PropSASLJAASConfig, "unterminated quoted value"}},
		{"jaas missing equals", saslWith(plainModule + ` required username "u" password=` + pw + `;`), nil,
			[]string{PropSASLJAASConfig, "expected '='"}},
		{"jaas unquoted value with space", saslWith(plainModule + ` required username=u password=` + pw + ` tail;`), nil,
			[]string{PropSASLJAASConfig, "must be quoted"}},
		{"jaas two entries", saslWith(plainModule + ` required username="u" password="` + pw + `"; ` + plainModule + ` required;`), nil,
			[]string{PropSASLJAASConfig, "exactly one login module"}},
		{"jaas empty entry", saslWith(`;`), nil, []string{PropSASLJAASConfig, "login module class name"}},
		{"jaas OAuth module", saslWith(`org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientSecret="` + pw + `";`), nil,
			[]string{PropSASLJAASConfig, "OAuthBearerLoginModule", "PlainLoginModule", "not supported by kafka-go"}},
		{"jaas SCRAM module for PLAIN", saslWith(scramModule + ` required username="u" password="` + pw + `";`), nil,
			[]string{PropSASLJAASConfig, PropSASLMechanism + "=PLAIN", "different mechanism"}},
		{"jaas duplicate password", saslWith(plainModule + ` required username="u" password="a` + pw + `" password="` + pw + `";`), nil,
			[]string{PropSASLJAASConfig, "password is given 2 times"}},
		{"jaas tokenauth", map[string]string{PropSecurityProtocol: "SASL_SSL", PropSASLMechanism: "SCRAM-SHA-256",
			PropSASLJAASConfig: scramModule + ` required username="u" password="` + pw + `" tokenauth="true";`}, nil,
			[]string{PropSASLJAASConfig, "tokenauth"}},
		{"jaas and sasl.password disagree", func() map[string]string {
			m := saslWith(plainModule + ` required username="u" password="` + pw + `";`)
			m[PropSASLPassword] = pw + "x"
			return m
		}(), nil, []string{PropSASLPassword, PropSASLJAASConfig, "disagree"}},
		{"SCRAM password not SASLprep-able", map[string]string{PropSecurityProtocol: "SASL_SSL", PropSASLMechanism: "SCRAM-SHA-512",
			PropSASLUsername: "u"}, map[string]string{EnvSASLPassword: pw + "\u0007"},
			[]string{"SCRAM-SHA-512", "SASLprep"}},
		{"SASL property without SASL protocol", map[string]string{PropSecurityProtocol: "SSL", PropSASLMechanism: "PLAIN"}, nil,
			[]string{PropSASLMechanism, "security.protocol=SSL", "SASL_SSL"}},
		{"password without SASL protocol", map[string]string{PropSASLPassword: pw}, nil,
			[]string{PropSASLPassword, "PLAINTEXT"}},
		{"TLS file without TLS protocol", map[string]string{PropSecurityProtocol: "SASL_PLAINTEXT", PropSASLMechanism: "PLAIN",
			PropSASLUsername: "u", PropSASLPassword: pw, PropCALocation: f.ca}, nil,
			[]string{PropCALocation, "SASL_PLAINTEXT", "SASL_SSL"}},
		{"JKS truststore type", ssl(PropTruststoreType, "JKS", PropTruststoreLocation, f.jks), nil,
			[]string{PropTruststoreType + "=JKS", "convert", "PEM"}},
		{"PKCS12 keystore type", ssl(PropKeystoreType, "PKCS12", PropKeystoreLocation, f.jks), nil,
			[]string{PropKeystoreType + "=PKCS12", "convert", "PEM"}},
		{"unknown store type", ssl(PropTruststoreType, "XYZ"), nil, []string{PropTruststoreType, "supported: PEM"}},
		{"JKS file without type", ssl(PropTruststoreLocation, f.jks), nil,
			[]string{PropTruststoreLocation, "not PEM", PropTruststoreType, "JKS"}},
		{"JKS file declared PEM", ssl(PropTruststoreType, "PEM", PropTruststoreLocation, f.jks), nil,
			[]string{PropTruststoreLocation, "JKS key store", "convert"}},
		{"DER file as CA", ssl(PropCALocation, f.notPEM), nil, []string{PropCALocation, "DER or PKCS12"}},
		{"missing CA file", ssl(PropCALocation, filepath.Join(t.TempDir(), "nope.pem")), nil,
			[]string{PropCALocation, "no such file"}},
		{"key file as CA", ssl(PropCALocation, f.key), nil, []string{PropCALocation, "no PEM CERTIFICATE"}},
		{"two CA sources", ssl(PropTruststoreLocation, f.ca, PropCALocation, f.ca), nil,
			[]string{PropTruststoreLocation, PropCALocation, "set only one"}},
		{"keystore location and key", ssl(PropKeystoreLocation, f.clientPEM, PropKeyLocation, f.key), nil,
			[]string{PropKeystoreLocation, PropKeyLocation, "not both"}},
		{"certificate without key", ssl(PropCertificateLocation, f.cert), nil,
			[]string{PropCertificateLocation, "no private key", PropKeyLocation}},
		{"keystore key without chain", ssl(PropKeystoreKey, "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"), nil,
			[]string{PropKeystoreKey, PropKeystoreChain}},
		{"encrypted key", ssl(PropCertificateLocation, f.cert, PropKeyLocation, f.encKey), nil,
			[]string{PropKeyLocation, "encrypted private key", "openssl pkey"}},
		{"key password", ssl(PropKeyPassword, pw), nil, []string{PropKeyPassword, "encrypted private keys are not supported"}},
		{"truststore password", ssl(PropTruststorePassword, pw), nil, []string{PropTruststorePassword, "not supported for PEM"}},
		{"bad endpoint algorithm", ssl(PropEndpointIdentification, "dns"), nil, []string{PropEndpointIdentification, `"dns"`, "https"}},
		{"bad verification flag", ssl(PropCertVerification, "nope"), nil, []string{PropCertVerification, "boolean"}},
		{"bad inline CA", ssl(PropTruststoreCertificates, "-----BEGIN CERTIFICATE----- !!!! -----END CERTIFICATE-----"), nil,
			[]string{PropTruststoreCertificates, "invalid base64"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A file's faults are found when the client's process reads
			// it (Load), never by FromProperties, which opens nothing.
			got, err := FromProperties(tc.props, envOf(tc.env))
			if err == nil {
				got, err = got.Load()
			}
			if err == nil {
				t.Fatalf("no error; got %v", got)
			}
			t.Logf("%v", err)
			if got != (Config{}) {
				t.Errorf("a failed FromProperties or Load returned a non-zero Config %v", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), pw) {
				t.Errorf("error %q contains the password", err)
			}
		})
	}
}

func TestKeys(t *testing.T) {
	t.Parallel()
	keys := Keys()
	if !sort.StringsAreSorted(keys) {
		t.Errorf("Keys() not sorted: %v", keys)
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			t.Errorf("duplicate key %s", k)
		}
		seen[k] = true
	}
	for _, k := range []string{PropSecurityProtocol, PropSASLMechanism, PropSASLJAASConfig, PropSASLUsername, PropSASLPassword,
		PropTruststoreType, PropTruststoreLocation, PropTruststoreCertificates, PropKeystoreType, PropKeystoreLocation,
		PropKeystoreChain, PropKeystoreKey, PropCALocation, PropCertificateLocation, PropKeyLocation, PropEndpointIdentification,
		PropKeyPassword, PropKeystorePassword, PropTruststorePassword} {
		if !seen[k] {
			t.Errorf("Keys() lacks %s", k)
		}
	}
	keys[0] = "mutated"
	if Keys()[0] == "mutated" {
		t.Error("Keys() returns shared storage")
	}
	if !reflect.DeepEqual(Keys(), Keys()) {
		t.Error("Keys() unstable")
	}
}

// exported is c without what FromProperties keeps for Load and messages,
// so tables compare the fields a caller sees.
func exported(c Config) Config {
	c.names, c.fromProps, c.untypedCA, c.untypedKeystore = sourceNames{}, false, "", ""
	c.caData, c.certData, c.keyData, c.loaded = "", "", "", false
	return c
}
