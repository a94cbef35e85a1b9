package kafkasec

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strings"
	"time"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"
)

func (c Config) checkProtocol() error {
	for _, p := range Protocols {
		if c.protocol() == p {
			return nil
		}
	}
	return fmt.Errorf("kafkasec: security.protocol %q is not supported; supported: %s", string(c.Protocol), joinProtocols())
}

func joinProtocols() string {
	s := make([]string, len(Protocols))
	for i, p := range Protocols {
		s[i] = string(p)
	}
	return strings.Join(s, ", ")
}

func joinMechanisms() string {
	s := make([]string, len(Mechanisms))
	for i, m := range Mechanisms {
		s[i] = string(m)
	}
	return strings.Join(s, ", ")
}

// Validate checks c the way Dialer and Transport would, including reading
// the TLS files (as Load does), without connecting.
func (c Config) Validate() error {
	if err := c.checkProtocol(); err != nil {
		return err
	}
	if _, err := c.saslMechanism(); err != nil {
		return err
	}
	_, err := c.tlsConfig(c.srcNames())
	return err
}

// saslMechanism returns the kafka-go mechanism, nil without SASL. Its errors
// never carry the password: xdg-go/scram's own SASLprep error quotes it, so
// that error is replaced, not wrapped.
func (c Config) saslMechanism() (sasl.Mechanism, error) {
	p := c.protocol()
	if !p.UsesSASL() {
		if c.Mechanism != "" || c.Username != "" || c.Password != "" {
			return nil, fmt.Errorf("kafkasec: SASL settings are set but security.protocol=%s does not use SASL (use SASL_PLAINTEXT or SASL_SSL)", p)
		}
		return nil, nil
	}
	if c.Mechanism == "" {
		return nil, fmt.Errorf("kafkasec: security.protocol=%s needs sasl.mechanism (Kafka defaults to GSSAPI, which kafka-go does not support); supported: %s", p, joinMechanisms())
	}
	if err := checkMechanism(string(c.Mechanism)); err != nil {
		return nil, err
	}
	if c.Username == "" {
		return nil, fmt.Errorf("kafkasec: SASL mechanism %s needs a username", c.Mechanism)
	}
	if c.Password == "" {
		return nil, fmt.Errorf("kafkasec: SASL mechanism %s needs a password", c.Mechanism)
	}
	switch c.Mechanism {
	case Plain:
		return plain.Mechanism{Username: c.Username, Password: c.Password}, nil
	case ScramSHA256, ScramSHA512:
		algo := scram.SHA256
		if c.Mechanism == ScramSHA512 {
			algo = scram.SHA512
		}
		m, err := scram.Mechanism(algo, c.Username, c.Password)
		if err != nil {
			return nil, fmt.Errorf("kafkasec: %s cannot use these credentials: the username or password is not valid SASLprep (RFC 4013) text", c.Mechanism)
		}
		return m, nil
	}
	panic("unreachable")
}

func checkMechanism(m string) error {
	for _, s := range Mechanisms {
		if Mechanism(m) == s {
			return nil
		}
	}
	switch strings.ToUpper(m) {
	case "GSSAPI":
		return fmt.Errorf("kafkasec: sasl.mechanism GSSAPI (Kerberos) is not supported by kafka-go; supported: %s", joinMechanisms())
	case "OAUTHBEARER":
		return fmt.Errorf("kafkasec: sasl.mechanism OAUTHBEARER is not supported by kafka-go; supported: %s", joinMechanisms())
	}
	return fmt.Errorf("kafkasec: sasl.mechanism %q is not supported; supported: %s", m, joinMechanisms())
}

// Dialer returns a kafka-go Dialer for c. With TLS, the TLS handshake is
// done by the Dialer's DialFunc (its TLS field stays nil), so a handshake
// failure comes back as a *TLSError naming the broker address. A read
// that times out on a connection the broker never sent a byte on fails
// with a *NoAnswerError.
func (c Config) Dialer(clientID string, timeout time.Duration) (*kafka.Dialer, error) {
	tc, mech, err := c.build()
	if err != nil {
		return nil, err
	}
	d := &kafka.Dialer{
		ClientID:      clientID,
		Timeout:       timeout,
		DualStack:     true,
		SASLMechanism: mech,
	}
	d.DialFunc = watchSilence((&net.Dialer{}).DialContext)
	if tc != nil {
		d.DialFunc = tlsDialFunc(tc, d.DialFunc)
	}
	return d, nil
}

// Transport returns a new kafka-go Transport for c (never shared, so
// closing its idle connections affects no one else). As with Dialer, TLS is
// set up in the Transport's Dial function and handshake failures are
// reported as *TLSError; silent brokers as *NoAnswerError.
func (c Config) Transport(clientID string, dialTimeout time.Duration) (*kafka.Transport, error) {
	tc, mech, err := c.build()
	if err != nil {
		return nil, err
	}
	t := &kafka.Transport{
		ClientID:    clientID,
		DialTimeout: dialTimeout,
		SASL:        mech,
	}
	t.Dial = watchSilence((&net.Dialer{Timeout: dialTimeout}).DialContext)
	if tc != nil {
		t.Dial = tlsDialFunc(tc, t.Dial)
	}
	return t, nil
}

func (c Config) build() (*tls.Config, sasl.Mechanism, error) {
	if err := c.checkProtocol(); err != nil {
		return nil, nil, err
	}
	mech, err := c.saslMechanism()
	if err != nil {
		return nil, nil, err
	}
	tc, err := c.tlsConfig(c.srcNames())
	if err != nil {
		return nil, nil, err
	}
	return tc, mech, nil
}

// TLSError is a failed TLS handshake with a broker.
type TLSError struct {
	Addr string // broker address dialled
	Err  error  // what crypto/tls (or the network) reported
}

func (e *TLSError) Error() string {
	return fmt.Sprintf("TLS handshake with %s failed: %v", e.Addr, e.Err)
}

func (e *TLSError) Unwrap() error { return e.Err }

func tlsDialFunc(base *tls.Config, dial func(context.Context, string, string) (net.Conn, error)) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		raw, err := dial(ctx, network, address)
		if err != nil {
			return nil, err
		}
		cfg := base
		if cfg.ServerName == "" {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				host = address
			}
			cfg = base.Clone()
			cfg.ServerName = host
		}
		conn := tls.Client(raw, cfg)
		if err := conn.HandshakeContext(ctx); err != nil {
			_ = raw.Close()
			return nil, &TLSError{Addr: address, Err: err}
		}
		return conn, nil
	}
}
