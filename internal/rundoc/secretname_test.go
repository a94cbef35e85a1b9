package rundoc

import (
	"slices"
	"strings"
	"testing"
)

// TestSecretName is the one rule for names: properties, JAAS options,
// flags and environment variables alike.
func TestSecretName(t *testing.T) {
	t.Parallel()
	secret := []string{
		"password", "sasl.password", "ssl.key.password", "ssl.keystore.password", "ssl.truststore.password", "PASSWORD",
		"DB_PASSWORD", "MyPassword", "--password", "-password",
		"passwd", "MYSQL_PASSWD", "db.passwd", "PGPASSWD",
		"pwd", "DB_PWD", "mysql.pwd", "dbpwd", "--pwd",
		"pass", "DB_PASS", "--pass", "pw", "ADMIN_PW",
		"passphrase", "ssl.key.passphrase", "GPG_PASSPHRASE",
		"secret", "client.Secret", "AWS_SECRET_ACCESS_KEY", "client_secret", "KBENCH_SECRET_PROPS",
		"token", "KBENCH_TOKEN", "GITHUB_TOKEN", "my.API_TOKEN", "accessToken", "sasl.oauthbearer.token.endpoint.url",
		"api_key", "API_KEY", "apikey", "ApiKey", "x-api-key", "api.key", "DD_API_KEY",
		"credentials", "basic.auth.credentials", "GOOGLE_APPLICATION_CREDENTIALS", "credential",
		"basic.auth.user.info", "schema.registry.basic.auth.user.info", "BASIC_AUTH_USER_INFO", "userinfo",
		"sasl.jaas.config", "listener.name.sasl_ssl.plain.sasl.jaas.config", "SASL_JAAS_CONFIG",
		"private", "private.key", "ssl.private.key", "PRIVATE_KEY",
		"ssl.keystore.key", "ssl.key.pem", "SSL_KEYSTORE_KEY",
	}
	plain := []string{
		"", "bootstrap.servers", "security.protocol", "sasl.mechanism", "sasl.username", "username", "user",
		"ssl.keystore.location", "ssl.truststore.certificates", "ssl.keystore.type", "ssl.key", "key.serializer",
		"acks", "PATH", "HOME", "PWD", "OLDPWD", "JAVA_TOOL_OPTIONS", "KAFKA_OPTS", "KBENCH_SERVER", "DATABASE_URL",
		"passive", "bypass", "compass", "pwm", "topic", "--topic", "serviceName", "unsecuredLoginStringClaim_sub",
		"keystore", "api", "auth",
	}
	for _, n := range secret {
		if !SecretName(n) {
			t.Errorf("SecretName(%q) = false, want true", n)
		}
	}
	for _, n := range plain {
		if SecretName(n) {
			t.Errorf("SecretName(%q) = true, want false", n)
		}
	}
}

// TestRedactURLs: the password of a URL's userinfo and secret query
// parameters go, the rest of the text stays byte for byte.
func TestRedactURLs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"postgres://kbench:s3cret@db:5432/kbench?sslmode=disable", "postgres://kbench:[redacted]@db:5432/kbench?sslmode=disable"},
		{"DATABASE_URL=postgresql://u:p@h/db", "DATABASE_URL=postgresql://u:[redacted]@h/db"},
		{"http://user:pa:ss@host", "http://user:[redacted]@host"},
		{"https://u:p%40ss@registry.example:8081/subjects", "https://u:[redacted]@registry.example:8081/subjects"},
		{"https://u:with@at@host/x", "https://u:[redacted]@host/x"},
		{"see http://a:b@h1 and HTTPS://c:d@h2/", "see http://a:[redacted]@h1 and HTTPS://c:[redacted]@h2/"},
		{"jdbc:postgresql://u:p@h/db", "jdbc:postgresql://u:[redacted]@h/db"},
		{"postgres://h/db?user=u&password=pw&sslmode=require", "postgres://h/db?user=u&password=[redacted]&sslmode=require"},
		{"https://hooks.example/x?token=abc#frag", "https://hooks.example/x?token=[redacted]#frag"},
		{"https://h/?api_key=k1;x=1", "https://h/?api_key=[redacted];x=1"},
		// Kept: no password, a user alone, ports, plain text, empty values.
		{"http://host:8080/path", "http://host:8080/path"},
		{"http://alice@host/", "http://alice@host/"},
		{"http://u:@host/", "http://u:@host/"},
		{"user:pass@host", "user:pass@host"},
		{"https://h/?password=", "https://h/?password="},
		{"https://h/?topic=t&acks=all", "https://h/?topic=t&acks=all"},
		{"no url here", "no url here"},
		{"a@b:c", "a@b:c"},
	} {
		if got := RedactURLs(c.in); got != c.want {
			t.Errorf("RedactURLs(%q)\n got  %q\n want %q", c.in, got, c.want)
		}
	}
	got := URLSecrets("x https://u:p%40ss@h/?token=tok1&a=b postgres://v:w@h")
	for _, want := range []string{"p%40ss", "p@ss", "tok1", "w"} {
		if !slices.Contains(got, want) {
			t.Errorf("URLSecrets = %q, lacks %q", got, want)
		}
	}
	if slices.Contains(got, "b") || slices.Contains(got, "u") || slices.Contains(got, "v") {
		t.Errorf("URLSecrets = %q: a user or a plain value", got)
	}
}

// TestRedactPropsURLs: a property whose name is not secret still loses
// the password of a URL in its value, so SplitSecrets keeps it out of the
// stored spec.
func TestRedactPropsURLs(t *testing.T) {
	t.Parallel()
	in := map[string]string{"schema.registry.url": "https://sr:pw-url@registry:8081", "basic.auth.user.info": "sr:pw-bai", "acks": "all"}
	got := RedactProps(in)
	if got["schema.registry.url"] != "https://sr:[redacted]@registry:8081" || got["basic.auth.user.info"] != Redacted || got["acks"] != "all" {
		t.Errorf("RedactProps = %q", got)
	}
	public, secrets := SplitSecrets(Spec{Props: in})
	if strings.Contains(fmtProps(public.Props), "pw-") || len(secrets) != 2 {
		t.Errorf("public %q, secrets %q", public.Props, secrets)
	}
}

func fmtProps(p map[string]string) string {
	var sb strings.Builder
	for k, v := range p {
		sb.WriteString(k + "=" + v + "\n")
	}
	return sb.String()
}

// FuzzRedactURLs: redaction never panics, is idempotent, and leaves no
// URL secret but the placeholder behind.
func FuzzRedactURLs(f *testing.F) {
	for _, s := range []string{"postgres://u:p@h/db?password=x", "http://a:b@c@d/", "?token=&x=1", "a://:@", "https://h/?api_key=k;x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := RedactURLs(s)
		if again := RedactURLs(r); again != r {
			t.Fatalf("not idempotent: %q → %q → %q", s, r, again)
		}
		for _, left := range URLSecrets(r) {
			if left != Redacted {
				t.Fatalf("RedactURLs(%q) = %q keeps the secret %q", s, r, left)
			}
		}
	})
}
