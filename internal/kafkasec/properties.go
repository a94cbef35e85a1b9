package kafkasec

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kbench/kbench/internal/rundoc"
)

// Property names read by FromProperties. Kafka's own names come first; the
// librdkafka-style ssl.*.location/ssl.*.pem names, enable.ssl.certificate.
// verification, sasl.username, sasl.password and ssl.server.name are
// kbench extensions.
const (
	PropSecurityProtocol = "security.protocol"
	PropSASLMechanism    = "sasl.mechanism"
	PropSASLJAASConfig   = "sasl.jaas.config"
	PropSASLUsername     = "sasl.username"
	PropSASLPassword     = "sasl.password"

	PropTruststoreType         = "ssl.truststore.type"
	PropTruststoreLocation     = "ssl.truststore.location"
	PropTruststoreCertificates = "ssl.truststore.certificates"
	PropTruststorePassword     = "ssl.truststore.password"
	PropKeystoreType           = "ssl.keystore.type"
	PropKeystoreLocation       = "ssl.keystore.location"
	PropKeystoreChain          = "ssl.keystore.certificate.chain"
	PropKeystoreKey            = "ssl.keystore.key"
	PropKeystorePassword       = "ssl.keystore.password"
	PropKeyPassword            = "ssl.key.password"
	PropEndpointIdentification = "ssl.endpoint.identification.algorithm"

	PropCALocation          = "ssl.ca.location"
	PropCAPEM               = "ssl.ca.pem"
	PropCertificateLocation = "ssl.certificate.location"
	PropCertificatePEM      = "ssl.certificate.pem"
	PropKeyLocation         = "ssl.key.location"
	PropKeyPEM              = "ssl.key.pem"
	PropCertVerification    = "enable.ssl.certificate.verification"
	PropServerName          = "ssl.server.name"
)

// Environment variables FromProperties falls back to for the SASL
// credentials when no property provides them.
const (
	EnvSASLUsername = "KBENCH_SASL_USERNAME"
	EnvSASLPassword = "KBENCH_SASL_PASSWORD"
)

var allKeys = []string{
	PropSecurityProtocol, PropSASLMechanism, PropSASLJAASConfig, PropSASLUsername, PropSASLPassword,
	PropTruststoreType, PropTruststoreLocation, PropTruststoreCertificates, PropTruststorePassword,
	PropKeystoreType, PropKeystoreLocation, PropKeystoreChain, PropKeystoreKey, PropKeystorePassword,
	PropKeyPassword, PropEndpointIdentification,
	PropCALocation, PropCAPEM, PropCertificateLocation, PropCertificatePEM, PropKeyLocation, PropKeyPEM,
	PropCertVerification, PropServerName,
}

// Keys returns, sorted, every property name FromProperties reads, so a
// caller can reject unknown properties and list the supported ones.
func Keys() []string {
	out := append([]string(nil), allKeys...)
	sort.Strings(out)
	return out
}

// sslMaterialKeys are the properties that only make sense with TLS.
var sslMaterialKeys = []string{
	PropTruststoreLocation, PropTruststoreCertificates, PropTruststorePassword,
	PropKeystoreLocation, PropKeystoreChain, PropKeystoreKey, PropKeystorePassword, PropKeyPassword,
	PropCALocation, PropCAPEM, PropCertificateLocation, PropCertificatePEM, PropKeyLocation, PropKeyPEM,
	PropServerName,
}

var saslKeys = []string{PropSASLMechanism, PropSASLJAASConfig, PropSASLUsername, PropSASLPassword}

// FromProperties builds a Config from Kafka client properties.
//
// Values are trimmed of surrounding white space (as Kafka does); an empty
// value counts as absent, except for ssl.endpoint.identification.algorithm,
// where empty means "no host name verification" as in Kafka. env looks up environment variables (pass
// os.Getenv; nil means none): KBENCH_SASL_USERNAME and KBENCH_SASL_PASSWORD
// supply the SASL credentials when neither sasl.jaas.config nor
// sasl.username / sasl.password does. No file is opened: a TLS file's
// path is checked as text only (CheckPath), inline PEM is checked here,
// and the files are read by Config.Load, in the process that runs the
// client, which reports a missing, oversized or malformed file.
//
// Errors name the property at fault and never contain a secret, nor
// anything about a file but what its property's text says.
func FromProperties(props map[string]string, env func(string) string) (Config, error) {
	get := func(k string) string { return strings.TrimSpace(props[k]) }
	var c Config

	proto := strings.ToUpper(get(PropSecurityProtocol))
	if proto == "" {
		proto = string(Plaintext)
	}
	c.Protocol = Protocol(proto)
	if err := c.checkProtocol(); err != nil {
		return Config{}, fmt.Errorf("kafkasec: %s %q is not supported; supported: %s", PropSecurityProtocol, get(PropSecurityProtocol), joinProtocols())
	}

	if c.Protocol.UsesSASL() {
		if err := readSASL(&c, get, env); err != nil {
			return Config{}, err
		}
	} else if k := firstSet(get, saslKeys); k != "" {
		return Config{}, fmt.Errorf("kafkasec: %s is set but %s=%s does not use SASL (use SASL_PLAINTEXT or SASL_SSL)", k, PropSecurityProtocol, c.Protocol)
	}

	if c.Protocol.UsesTLS() {
		names, err := readTLS(&c, props, get)
		if err != nil {
			return Config{}, err
		}
		c.names, c.fromProps = names, true
		if c.CAFile == "" && c.CertFile == "" && c.KeyFile == "" {
			// All inline: nothing to read, so check it all now.
			if _, err := c.tlsConfig(names); err != nil {
				return Config{}, err
			}
		}
	} else if k := firstSet(get, sslMaterialKeys); k != "" {
		return Config{}, fmt.Errorf("kafkasec: %s is set but %s=%s does not use TLS (use SSL or SASL_SSL)", k, PropSecurityProtocol, c.Protocol)
	}
	return c, nil
}

func firstSet(get func(string) string, keys []string) string {
	for _, k := range keys {
		if get(k) != "" {
			return k
		}
	}
	return ""
}

func readSASL(c *Config, get func(string) string, env func(string) string) error {
	mech := get(PropSASLMechanism)
	if mech == "" {
		return fmt.Errorf("kafkasec: %s=%s needs %s (Kafka defaults to GSSAPI, which kafka-go does not support); supported: %s", PropSecurityProtocol, c.Protocol, PropSASLMechanism, joinMechanisms())
	}
	if m := Mechanism(strings.ToUpper(mech)); checkMechanism(string(m)) == nil {
		c.Mechanism = m
	} else {
		return checkMechanism(mech)
	}

	var jaasUser, jaasPass string
	if text := get(PropSASLJAASConfig); text != "" {
		var err error
		if jaasUser, jaasPass, err = credentialsFromJAAS(text, c.Mechanism); err != nil {
			return err
		}
	}
	user, pass := get(PropSASLUsername), get(PropSASLPassword)
	if user != "" && jaasUser != "" && user != jaasUser {
		return fmt.Errorf("kafkasec: %s and the username in %s disagree; set only one", PropSASLUsername, PropSASLJAASConfig)
	}
	if pass != "" && jaasPass != "" && pass != jaasPass {
		return fmt.Errorf("kafkasec: %s and the password in %s disagree; set only one", PropSASLPassword, PropSASLJAASConfig)
	}
	if user == "" {
		user = jaasUser
	}
	if pass == "" {
		pass = jaasPass
	}
	if user == "" && env != nil {
		user = env(EnvSASLUsername)
	}
	if pass == "" && env != nil {
		pass = env(EnvSASLPassword)
	}
	if user == "" {
		return fmt.Errorf("kafkasec: %s=%s with %s needs a username: set %s (username=\"...\"), %s, or the %s environment variable", PropSecurityProtocol, c.Protocol, c.Mechanism, PropSASLJAASConfig, PropSASLUsername, EnvSASLUsername)
	}
	if pass == "" {
		return fmt.Errorf("kafkasec: %s=%s with %s needs a password: set %s (password=\"...\"), %s, or the %s environment variable", PropSecurityProtocol, c.Protocol, c.Mechanism, PropSASLJAASConfig, PropSASLPassword, EnvSASLPassword)
	}
	c.Username, c.Password = user, pass
	if _, err := c.saslMechanism(); err != nil {
		return err
	}
	return nil
}

// credentialsFromJAAS extracts username and password from sasl.jaas.config.
func credentialsFromJAAS(text string, mech Mechanism) (user, pass string, err error) {
	entries, err := rundoc.ParseJAAS(text)
	if err != nil {
		return "", "", fmt.Errorf("kafkasec: %s: %w", PropSASLJAASConfig, err)
	}
	if len(entries) != 1 {
		return "", "", fmt.Errorf("kafkasec: %s must hold exactly one login module entry, it holds %d", PropSASLJAASConfig, len(entries))
	}
	e := entries[0]
	var want string
	switch mech {
	case Plain:
		want = "PlainLoginModule"
	default:
		want = "ScramLoginModule"
	}
	if kind := moduleKind(e.Module); kind != want {
		what := "its login module"
		if name := safeModuleName(e.Module); name != "" {
			what = name
		}
		hint := ""
		switch kind {
		case "PlainLoginModule", "ScramLoginModule":
			hint = fmt.Sprintf(" (%s belongs to a different mechanism)", kind)
		case "OAuthBearerLoginModule", "Krb5LoginModule":
			hint = " (OAUTHBEARER and GSSAPI are not supported by kafka-go)"
		}
		return "", "", fmt.Errorf("kafkasec: %s: %s does not fit %s=%s; use org.apache.kafka.common.security.%s.%s%s",
			PropSASLJAASConfig, what, PropSASLMechanism, mech, strings.ToLower(strings.TrimSuffix(want, "LoginModule")), want, hint)
	}
	for _, name := range []string{"username", "password"} {
		if n := len(e.Option(name)); n > 1 {
			return "", "", fmt.Errorf("kafkasec: %s: option %s is given %d times", PropSASLJAASConfig, name, n)
		}
	}
	if v := e.Option("tokenauth"); len(v) == 1 && strings.EqualFold(v[0], "true") {
		return "", "", fmt.Errorf("kafkasec: %s: tokenauth=true (delegation tokens) is not supported by kafka-go", PropSASLJAASConfig)
	}
	if v := e.Option("username"); len(v) == 1 {
		user = v[0]
	}
	if v := e.Option("password"); len(v) == 1 {
		pass = v[0]
	}
	return user, pass, nil
}

// readTLS fills the TLS fields of c and returns the property names to use
// in error messages about them.
func readTLS(c *Config, props map[string]string, get func(string) string) (sourceNames, error) {
	var n sourceNames
	for _, p := range []string{PropTruststoreType, PropKeystoreType} {
		switch t := strings.ToUpper(get(p)); t {
		case "", "PEM":
		case "JKS", "PKCS12", "JCEKS", "BCFKS":
			return n, fmt.Errorf("kafkasec: %s=%s is not supported; convert the store to PEM and set %s=PEM (%s)", p, get(p), p, convertHint)
		default:
			return n, fmt.Errorf("kafkasec: %s %q is not supported; supported: PEM", p, get(p))
		}
	}
	for _, p := range []string{PropTruststorePassword, PropKeystorePassword} {
		if get(p) != "" {
			return n, fmt.Errorf("kafkasec: %s is not supported for PEM stores (Kafka rejects it too); remove it", p)
		}
	}
	if get(PropKeyPassword) != "" {
		return n, fmt.Errorf("kafkasec: %s: encrypted private keys are not supported; decrypt the key (e.g. openssl pkey -in key.pem -out key-plain.pem) and remove %s", PropKeyPassword, PropKeyPassword)
	}

	// Trust: at most one source.
	ca, err := one(get, PropTruststoreLocation, PropTruststoreCertificates, PropCALocation, PropCAPEM)
	if err != nil {
		return n, err
	}
	switch ca {
	case PropTruststoreLocation, PropCALocation:
		c.CAFile, n.caFile = get(ca), ca
		if err := CheckPath(ca, c.CAFile); err != nil {
			return n, err
		}
		if ca == PropTruststoreLocation && get(PropTruststoreType) == "" {
			c.untypedCA = PropTruststoreType
		}
	case PropTruststoreCertificates, PropCAPEM:
		c.CAPEM, n.caPEM = get(ca), ca
	}

	// Client certificate and key.
	if get(PropKeystoreLocation) != "" {
		if other, _ := one(get, PropKeystoreChain, PropKeystoreKey, PropCertificateLocation, PropCertificatePEM, PropKeyLocation, PropKeyPEM); other != "" {
			return n, fmt.Errorf("kafkasec: set either %s or %s, not both", PropKeystoreLocation, other)
		}
		loc := get(PropKeystoreLocation)
		if err := CheckPath(PropKeystoreLocation, loc); err != nil {
			return n, err
		}
		if get(PropKeystoreType) == "" {
			c.untypedKeystore = PropKeystoreType
		}
		c.CertFile, c.KeyFile = loc, loc
		n.certFile, n.keyFile = PropKeystoreLocation, PropKeystoreLocation
	} else {
		cert, err := one(get, PropKeystoreChain, PropCertificateLocation, PropCertificatePEM)
		if err != nil {
			return n, err
		}
		key, err := one(get, PropKeystoreKey, PropKeyLocation, PropKeyPEM)
		if err != nil {
			return n, err
		}
		for _, p := range []string{cert, key} {
			if p == PropCertificateLocation || p == PropKeyLocation {
				if err := CheckPath(p, get(p)); err != nil {
					return n, err
				}
			}
		}
		switch cert {
		case PropCertificateLocation:
			c.CertFile, n.certFile = get(cert), cert
		case PropKeystoreChain, PropCertificatePEM:
			c.CertPEM, n.certPEM = get(cert), cert
		}
		switch key {
		case PropKeyLocation:
			c.KeyFile, n.keyFile = get(key), key
		case PropKeystoreKey, PropKeyPEM:
			c.KeyPEM, n.keyPEM = get(key), key
		}
		// Name a missing half after the property paired with the one set.
		if cert == "" {
			n.certFile = certFor[key]
		}
		if key == "" {
			n.keyFile = keyFor[cert]
		}
	}

	// Here an empty value is meaningful: Kafka's
	// ssl.endpoint.identification.algorithm= turns host name checks off.
	a, present := props[PropEndpointIdentification]
	a = strings.TrimSpace(a)
	switch {
	case !present || strings.EqualFold(a, "https"):
		// Kafka's default: verify the host name.
	case a == "" || strings.EqualFold(a, "none"):
		c.SkipHostnameVerification = true
	default:
		return n, fmt.Errorf("kafkasec: %s %q is not supported; use https (verify the broker host name, the default) or an empty value (do not)", PropEndpointIdentification, a)
	}
	if v := get(PropCertVerification); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return n, fmt.Errorf("kafkasec: %s %q is not a boolean (true or false)", PropCertVerification, v)
		}
		c.InsecureSkipVerify = !b
	}
	c.ServerName = get(PropServerName)
	return n, nil
}

// keyFor pairs each client certificate property with its key property.
var keyFor = map[string]string{
	PropCertificateLocation: PropKeyLocation,
	PropCertificatePEM:      PropKeyPEM,
	PropKeystoreChain:       PropKeystoreKey,
}

var certFor = map[string]string{
	PropKeyLocation: PropCertificateLocation,
	PropKeyPEM:      PropCertificatePEM,
	PropKeystoreKey: PropKeystoreChain,
}

// one returns the single set property among keys, "" if none, and an error
// naming them if several are set.
func one(get func(string) string, keys ...string) (string, error) {
	var set []string
	for _, k := range keys {
		if get(k) != "" {
			set = append(set, k)
		}
	}
	switch len(set) {
	case 0:
		return "", nil
	case 1:
		return set[0], nil
	}
	return set[0], fmt.Errorf("kafkasec: %s are alternatives; set only one", strings.Join(set, " and "))
}

// MaxPathLen is the longest file path a TLS property may give (Linux's
// PATH_MAX).
const MaxPathLen = 4096

// CheckPath checks the text of the file path prop gives, without
// looking at any file: one line of UTF-8 text, without control
// characters, of at most MaxPathLen bytes. Its message never quotes the
// path.
func CheckPath(prop, path string) error {
	bad := len(path) > MaxPathLen || !utf8.ValidString(path) ||
		strings.ContainsFunc(path, func(r rune) bool { return r < 0x20 || r == 0x7f })
	if bad {
		return fmt.Errorf("kafkasec: %s must be a file path: one line of text of at most %d bytes, without control characters", prop, MaxPathLen)
	}
	return nil
}
