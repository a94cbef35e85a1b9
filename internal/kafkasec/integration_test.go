package kafkasec

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	kafka "github.com/segmentio/kafka-go"
)

const (
	testTimeout = 3 * time.Second
	clientID    = "kbench-kafkasec-test"
)

// viaDialer connects with c.Dialer, creates topic and reads its partitions.
func viaDialer(ctx context.Context, c Config, addr, topic string) error {
	d, err := c.Dialer(clientID, testTimeout)
	if err != nil {
		return err
	}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.CreateTopics(kafka.TopicConfig{Topic: topic, NumPartitions: 1, ReplicationFactor: 1}); err != nil {
		return fmt.Errorf("create topic: %w", err)
	}
	parts, err := conn.ReadPartitions(topic)
	if err != nil {
		return fmt.Errorf("read partitions: %w", err)
	}
	if len(parts) != 1 {
		return fmt.Errorf("got %d partitions, want 1", len(parts))
	}
	return nil
}

// viaTransport asks for metadata through a kafka.Client on c.Transport,
// then writes three messages with acks=all through a Writer on the same
// Transport and checks that they landed.
func viaTransport(ctx context.Context, c Config, addr, topic string) error {
	tr, err := c.Transport(clientID, testTimeout)
	if err != nil {
		return err
	}
	defer tr.CloseIdleConnections()
	cl := &kafka.Client{Addr: kafka.TCP(addr), Transport: tr, Timeout: testTimeout}
	md, err := cl.Metadata(ctx, &kafka.MetadataRequest{})
	if err != nil {
		return err
	}
	if len(md.Brokers) != 1 {
		return fmt.Errorf("metadata lists %d brokers, want 1", len(md.Brokers))
	}
	ct, err := cl.CreateTopics(ctx, &kafka.CreateTopicsRequest{
		Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: 1, ReplicationFactor: 1}},
	})
	if err != nil {
		return fmt.Errorf("create topic: %w", err)
	}
	if err := ct.Errors[topic]; err != nil {
		return fmt.Errorf("create topic: %w", err)
	}
	w := &kafka.Writer{
		Addr:            kafka.TCP(addr),
		Topic:           topic,
		Transport:       tr,
		RequiredAcks:    kafka.RequireAll,
		BatchTimeout:    5 * time.Millisecond,
		WriteBackoffMin: 10 * time.Millisecond,
		WriteBackoffMax: 50 * time.Millisecond,
	}
	defer w.Close()
	msgs := []kafka.Message{{Value: []byte("one")}, {Value: []byte("two")}, {Value: []byte("three")}}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	offs, err := cl.ListOffsets(ctx, &kafka.ListOffsetsRequest{
		Topics: map[string][]kafka.OffsetRequest{topic: {kafka.LastOffsetOf(0)}},
	})
	if err != nil {
		return fmt.Errorf("list offsets: %w", err)
	}
	po := offs.Topics[topic]
	if len(po) != 1 || po[0].Error != nil || po[0].LastOffset != 3 {
		return fmt.Errorf("after writing 3 messages: offsets %+v", po)
	}
	return nil
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func jaasFor(mech Mechanism, user, pass string) string {
	module := "org.apache.kafka.common.security.scram.ScramLoginModule"
	if mech == Plain {
		module = "org.apache.kafka.common.security.plain.PlainLoginModule"
	}
	return fmt.Sprintf(`%s required username=%q password=%q;`, module, user, pass)
}

func saslProps(proto Protocol, mech Mechanism, user, pass string) map[string]string {
	return map[string]string{
		PropSecurityProtocol: string(proto),
		PropSASLMechanism:    string(mech),
		PropSASLJAASConfig:   jaasFor(mech, user, pass),
	}
}

func TestSASLPlaintextConnects(t *testing.T) {
	t.Parallel()
	addr := startCluster(t, true, nil)
	for _, u := range testUsers {
		t.Run(string(u.mech), func(t *testing.T) {
			ctx := testCtx(t)
			c := mustConfig(t, saslProps(SASLPlaintext, u.mech, u.user, u.pass))
			if err := viaDialer(ctx, c, addr, "dialer-"+string(u.mech)); err != nil {
				t.Fatalf("Dialer: %v", Explain(err, c))
			}
			if err := viaTransport(ctx, c, addr, "transport-"+string(u.mech)); err != nil {
				t.Fatalf("Transport: %v", Explain(err, c))
			}
		})
	}
}

// assertNoSecret fails if any rendering of err mentions secret.
func assertNoSecret(t *testing.T, err error, secret string) {
	t.Helper()
	for _, s := range []string{err.Error(), fmt.Sprintf("%v", err), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
		if strings.Contains(s, secret) {
			t.Errorf("error text contains the password: %s", s)
		}
	}
}

func TestWrongPasswordIsExplained(t *testing.T) {
	t.Parallel()
	addr := startCluster(t, true, nil)
	for _, u := range testUsers {
		t.Run(string(u.mech), func(t *testing.T) {
			ctx := testCtx(t)
			const wrong = "not-the-Passw0rd-xyzzy"
			c := mustConfig(t, saslProps(SASLPlaintext, u.mech, u.user, wrong))
			wantMsg := fmt.Sprintf("SASL authentication with mechanism %s as user %q failed (check the username and password", u.mech, u.user)

			check := func(path string, raw error, wantCause error) {
				t.Helper()
				if raw == nil {
					t.Fatalf("%s: connected with a wrong password", path)
				}
				t.Logf("%s: kafka-go says %q (%T)", path, raw, raw)
				if !errors.Is(raw, wantCause) {
					t.Errorf("%s: kafka-go error %q is not %v; its error shape changed", path, raw, wantCause)
				}
				got := Explain(raw, c)
				if !strings.Contains(got.Error(), wantMsg) {
					t.Errorf("%s: Explain = %q, want it to contain %q", path, got, wantMsg)
				}
				if !errors.Is(got, ErrAuthentication) || !errors.Is(got, wantCause) {
					t.Errorf("%s: Explain result does not wrap ErrAuthentication and the original", path)
				}
				if again := Explain(got, c); again != got {
					t.Errorf("%s: Explain is not idempotent", path)
				}
				assertNoSecret(t, raw, wrong)
				assertNoSecret(t, got, wrong)
			}

			tr, err := c.Transport(clientID, testTimeout)
			if err != nil {
				t.Fatal(err)
			}
			defer tr.CloseIdleConnections()
			_, err = (&kafka.Client{Addr: kafka.TCP(addr), Transport: tr, Timeout: testTimeout}).Metadata(ctx, &kafka.MetadataRequest{})
			check("Transport/Client.Metadata", err, io.ErrUnexpectedEOF)

			w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: "t", Transport: tr, RequiredAcks: kafka.RequireAll, MaxAttempts: 1}
			err = w.WriteMessages(ctx, kafka.Message{Value: []byte("x")})
			w.Close()
			check("Transport/Writer", err, io.ErrUnexpectedEOF)

			d, err := c.Dialer(clientID, testTimeout)
			if err != nil {
				t.Fatal(err)
			}
			conn, err := d.DialContext(ctx, "tcp", addr)
			if conn != nil {
				conn.Close()
			}
			check("Dialer", err, kafka.SASLAuthenticationFailed)
		})
	}
}

func TestNoSASLAgainstSASLBroker(t *testing.T) {
	t.Parallel()
	addr := startCluster(t, true, nil)
	var c Config // PLAINTEXT
	err := viaTransport(testCtx(t), c, addr, "t")
	got := Explain(err, c)
	t.Logf("PLAINTEXT against a SASL listener: %v", got)
	if !errors.Is(got, ErrConnectionClosed) || !strings.Contains(got.Error(), "SASL or TLS") {
		t.Errorf("Explain = %v, want a hint at SASL/TLS", got)
	}
}

func TestTLS(t *testing.T) {
	t.Parallel()
	pki := newTestPKI(t)
	sslAddr := startCluster(t, false, pki.serverTLS(tls.NoClientCert))
	saslSSLAddr := startCluster(t, true, pki.serverTLS(tls.NoClientCert))
	mtlsAddr := startCluster(t, false, pki.serverTLS(tls.RequireAndVerifyClientCert))
	plainAddr := startCluster(t, false, nil)
	_, port, _ := net.SplitHostPort(sslAddr)
	localhostAddr := net.JoinHostPort("localhost", port)
	// Inline PEM as it arrives from a .properties file continued over
	// lines: no newlines at all.
	oneLineCA := strings.Join(strings.Fields(pki.caPEM), " ")
	oneLineCA = strings.ReplaceAll(oneLineCA, "BEGIN CERTIFICATE", "BEGIN_CERTIFICATE")
	oneLineCA = strings.ReplaceAll(strings.ReplaceAll(oneLineCA, "END CERTIFICATE", "END_CERTIFICATE"), " ", "")
	oneLineCA = strings.ReplaceAll(strings.ReplaceAll(oneLineCA, "_CERTIFICATE", " CERTIFICATE"), "-----BEGIN", "-----BEGIN")

	ok := []struct {
		name  string
		addr  string
		props map[string]string
	}{
		{"SSL truststore PEM file", sslAddr, map[string]string{
			PropSecurityProtocol: "SSL", PropTruststoreType: "PEM", PropTruststoreLocation: pki.caFile}},
		{"SSL inline truststore without newlines", sslAddr, map[string]string{
			PropSecurityProtocol: "SSL", PropTruststoreType: "PEM", PropTruststoreCertificates: oneLineCA}},
		{"SSL ssl.ca.location via localhost name", localhostAddr, map[string]string{
			PropSecurityProtocol: "SSL", PropCALocation: pki.caFile}},
		{"SSL wrong server name but no hostname verification", sslAddr, map[string]string{
			PropSecurityProtocol: "SSL", PropCALocation: pki.caFile, PropServerName: "kafka.wrong.example",
			PropEndpointIdentification: ""}},
		{"SSL no verification at all", sslAddr, map[string]string{
			PropSecurityProtocol: "SSL", PropCALocation: pki.otherCA, PropCertVerification: "false"}},
		{"mTLS keystore PEM file", mtlsAddr, map[string]string{
			PropSecurityProtocol: "SSL", PropCALocation: pki.caFile,
			PropKeystoreType: "PEM", PropKeystoreLocation: pki.clientPEM}},
		{"mTLS certificate and key files", mtlsAddr, map[string]string{
			PropSecurityProtocol: "SSL", PropCALocation: pki.caFile,
			PropCertificateLocation: pki.clientCert, PropKeyLocation: pki.clientKey}},
	}
	for _, u := range testUsers {
		p := saslProps(SASLSSL, u.mech, u.user, u.pass)
		p[PropCALocation] = pki.caFile
		ok = append(ok, struct {
			name  string
			addr  string
			props map[string]string
		}{"SASL_SSL " + string(u.mech), saslSSLAddr, p})
	}
	for i, tc := range ok {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			c := mustConfig(t, tc.props)
			if err := viaDialer(ctx, c, tc.addr, fmt.Sprintf("dialer-%d", i)); err != nil {
				t.Fatalf("Dialer: %v", Explain(err, c))
			}
			if err := viaTransport(ctx, c, tc.addr, fmt.Sprintf("transport-%d", i)); err != nil {
				t.Fatalf("Transport: %v", Explain(err, c))
			}
		})
	}

	bad := []struct {
		name    string
		addr    string
		props   map[string]string
		timeout time.Duration
		want    string
		as      func(error) bool
	}{
		{"wrong CA", sslAddr, map[string]string{PropSecurityProtocol: "SSL", PropCALocation: pki.otherCA}, 0,
			"is not signed by a CA this client trusts", asType[x509.UnknownAuthorityError]},
		{"wrong CA with SASL_SSL", saslSSLAddr, func() map[string]string {
			p := saslProps(SASLSSL, Plain, "alice", "alice-secret")
			p[PropTruststoreType], p[PropTruststoreLocation] = "PEM", pki.otherCA
			return p
		}(), 0, "is not signed by a CA this client trusts", asType[x509.UnknownAuthorityError]},
		{"wrong CA without hostname verification", sslAddr, map[string]string{
			PropSecurityProtocol: "SSL", PropCALocation: pki.otherCA, PropEndpointIdentification: ""}, 0,
			"is not signed by a CA this client trusts", asType[x509.UnknownAuthorityError]},
		{"wrong server name", sslAddr, map[string]string{
			PropSecurityProtocol: "SSL", PropCALocation: pki.caFile, PropServerName: "kafka.wrong.example"}, 0,
			`is not valid for the name "kafka.wrong.example"`, asType[x509.HostnameError]},
		{"no client certificate for mTLS", mtlsAddr, map[string]string{
			PropSecurityProtocol: "SSL", PropCALocation: pki.caFile}, 0,
			"may require a client certificate", func(error) bool { return true }},
		{"TLS to a plaintext port", plainAddr, map[string]string{
			PropSecurityProtocol: "SSL", PropCALocation: pki.caFile}, time.Second,
			"plaintext", func(error) bool { return true }},
	}
	for i, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			c := mustConfig(t, tc.props)
			timeout := tc.timeout
			if timeout == 0 {
				timeout = testTimeout
			}
			d, err := c.Dialer(clientID, timeout)
			if err != nil {
				t.Fatal(err)
			}
			conn, dErr := d.DialContext(ctx, "tcp", tc.addr)
			if dErr == nil {
				// TLS 1.3 client-certificate failures surface on first use.
				_, dErr = conn.ReadPartitions()
				conn.Close()
			}
			tr, err := c.Transport(clientID, timeout)
			if err != nil {
				t.Fatal(err)
			}
			defer tr.CloseIdleConnections()
			// The request's own deadline far beyond the handshake's, and a
			// fresh context: on a loaded machine the request's 3 s ran out
			// first and kafka-go answered with it, not with the handshake.
			_, tErr := (&kafka.Client{Addr: kafka.TCP(tc.addr), Transport: tr, Timeout: 3 * max(timeout, testTimeout)}).
				Metadata(testCtx(t), &kafka.MetadataRequest{})
			for path, raw := range map[string]error{"Dialer": dErr, "Transport": tErr} {
				if raw == nil {
					t.Fatalf("%s: connected, want a TLS error", path)
				}
				got := Explain(raw, c)
				t.Logf("%s: kafka-go says %q\n  explained: %v", path, raw, got)
				if !errors.Is(got, ErrTLS) || !strings.Contains(got.Error(), tc.want) {
					t.Errorf("%s (case %d): Explain = %q, want ErrTLS containing %q", path, i, got, tc.want)
				}
				if !tc.as(raw) {
					t.Errorf("%s: kafka-go error %q does not wrap the expected x509 error", path, raw)
				}
				if c.Password != "" {
					assertNoSecret(t, got, c.Password)
				}
			}
		})
	}

	t.Run("plaintext to a TLS port", func(t *testing.T) {
		var c Config
		err := viaTransport(testCtx(t), c, sslAddr, "t")
		got := Explain(err, c)
		t.Logf("kafka-go says %q\n  explained: %v", err, got)
		if !errors.Is(got, ErrConnectionClosed) || !strings.Contains(got.Error(), "SASL or TLS") {
			t.Errorf("Explain = %v, want a hint at TLS", got)
		}
	})
}

func asType[T error](err error) bool {
	var target T
	return errors.As(err, &target)
}
