package kafkasec

import "strings"

// secretKeys are secret properties whose names do not give them away.
var secretKeys = map[string]bool{
	PropKeystoreKey: true, // inline private key
	PropKeyPEM:      true, // inline private key (librdkafka style)
}

// isSecretName reports whether a property or JAAS option name holds a
// secret: it contains "password", "secret", "token", "credential" or
// "private" in any case.
func isSecretName(name string) bool {
	l := strings.ToLower(name)
	for _, w := range []string{"password", "secret", "token", "credential", "private"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// Redact returns a copy of props that is safe to print or log. Secret
// values (sasl.password, ssl.key.password, ssl.keystore.password,
// ssl.truststore.password, ssl.keystore.key, ssl.key.pem and any property
// whose name contains password, secret, token, credential or private)
// become "[redacted]"; empty values stay empty. In sasl.jaas.config (and
// any key ending in it, such as listener-prefixed ones) only secret option
// values are replaced, e.g. password="[redacted]", keeping the rest
// readable; JAAS text that does not parse is redacted whole.
func Redact(props map[string]string) map[string]string {
	if props == nil {
		return nil
	}
	out := make(map[string]string, len(props))
	for k, v := range props {
		switch lk := strings.ToLower(k); {
		case v == "":
			out[k] = v
		case strings.HasSuffix(lk, PropSASLJAASConfig):
			out[k] = redactJAAS(v)
		case secretKeys[lk] || isSecretName(lk):
			out[k] = Redacted
		default:
			out[k] = v
		}
	}
	return out
}
