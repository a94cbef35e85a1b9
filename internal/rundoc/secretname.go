package rundoc

import (
	"net/url"
	"regexp"
	"strings"
	"unicode"
)

// secretStems are the stems that make a name secret wherever they occur in
// it, once the name is lower-cased and its separators (anything not a
// letter or digit) are dropped: "API_KEY", "api.key" and "apiKey" all read
// "apikey", "basic.auth.user.info" reads "basicauthuserinfo".
var secretStems = []string{
	"password", "passwd", "passphrase", "secret", "token", "credential", "private",
	"apikey", "userinfo", "sasljaasconfig",
}

// secretWords are the words (runs of letters and digits) that make a name
// secret when one of its words is one of them or, for "pwd", ends in it
// ("DB_PWD", "dbpwd"): too short to be looked for inside longer words
// ("pass" is in "passive", "pw" in "pwm").
var secretWords = map[string]bool{"pwd": true, "pw": true, "pass": true}

// secretNames are secret properties whose names do not give them away
// (compared without separators, as secretStems).
var secretNames = map[string]bool{
	"sslkeystorekey": true, // ssl.keystore.key: an inline private key
	"sslkeypem":      true, // ssl.key.pem: an inline private key (librdkafka style)
}

// SecretName reports whether a value named name is a secret: a Kafka
// property or JAAS option, a command-line flag (leading dashes ignored) or
// an environment variable. It is the one rule kbench uses wherever it
// hides values by their names (RedactProps, SplitSecrets, kbench exec's
// arguments, environment and properties files). A name is secret when,
// lower-cased and with its separators dropped, it contains password,
// passwd, passphrase, secret, token, credential, private, apikey,
// userinfo (basic.auth.user.info) or sasljaasconfig; when it is
// ssl.keystore.key or ssl.key.pem (inline private keys); or when one of
// its words is pass or pw or ends in pwd (DB_PWD). The shell's own PWD and
// OLDPWD variables, which hold the working directory, are not secret.
func SecretName(name string) bool {
	if name == "PWD" || name == "OLDPWD" {
		return false
	}
	words := strings.FieldsFunc(strings.ToLower(strings.TrimLeft(name, "-")), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	joined := strings.Join(words, "")
	if secretNames[joined] {
		return true
	}
	for _, s := range secretStems {
		if strings.Contains(joined, s) {
			return true
		}
	}
	for _, w := range words {
		if secretWords[w] || strings.HasSuffix(w, "pwd") {
			return true
		}
	}
	return false
}

// urlUserinfoRE finds the password of a URL's userinfo
// (scheme://user:password@host): group 1 is everything before the
// password, group 2 the password. The password runs to the last '@'
// before the host's end, as net/url reads it.
var urlUserinfoRE = regexp.MustCompile(`(?i)([a-z][a-z0-9+.-]*://[^\s/?#@:]*:)([^\s/?#]+)@`)

// urlParamRE finds query parameters (?name=value, &name=value): group 1
// is the name, group 2 the value.
var urlParamRE = regexp.MustCompile(`[?&;]([^=&;\s#?]+)=([^&;\s#]*)`)

// RedactURLs returns s with the secrets of the URLs in it replaced by
// Redacted: the password of a URL's userinfo
// (postgres://kbench:[redacted]@db/kbench) and the value of a query
// parameter whose name is secret (SecretName: ?password=, &token=).
// Everything else, the user name included, is kept.
func RedactURLs(s string) string {
	if !strings.Contains(s, "://") && !strings.ContainsAny(s, "?&;") {
		return s
	}
	s = urlUserinfoRE.ReplaceAllString(s, "${1}"+Redacted+"@")
	var sb strings.Builder
	last := 0
	for _, m := range urlParamRE.FindAllStringSubmatchIndex(s, -1) {
		if m[5] > m[4] && SecretName(s[m[2]:m[3]]) {
			sb.WriteString(s[last:m[4]])
			sb.WriteString(Redacted)
			last = m[5]
		}
	}
	if last == 0 {
		return s
	}
	sb.WriteString(s[last:])
	return sb.String()
}

// URLSecrets returns the secrets RedactURLs would replace in s, each as
// written and, where it differs, as decoded (%40 as @), so that text
// holding either can be cleaned by replacing them.
func URLSecrets(s string) []string {
	var out []string
	add := func(v string) {
		out = append(out, v)
		if d, err := url.PathUnescape(v); err == nil && d != v {
			out = append(out, d)
		}
	}
	for _, m := range urlUserinfoRE.FindAllStringSubmatch(s, -1) {
		add(m[2])
	}
	for _, m := range urlParamRE.FindAllStringSubmatch(s, -1) {
		if m[2] != "" && SecretName(m[1]) {
			add(m[2])
		}
	}
	return out
}
