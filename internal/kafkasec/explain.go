package kafkasec

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"

	kafka "github.com/segmentio/kafka-go"
)

// Sentinels for errors.Is on what Explain returns.
var (
	// ErrAuthentication marks a SASL authentication failure.
	ErrAuthentication = errors.New("kafka SASL authentication failed")
	// ErrTLS marks a failed TLS handshake or certificate check.
	ErrTLS = errors.New("kafka TLS handshake failed")
	// ErrConnectionClosed marks a connection the broker closed without an
	// answer while no SASL was configured.
	ErrConnectionClosed = errors.New("kafka broker closed the connection")
	// ErrNoAnswer marks a broker that accepted the connection and never
	// answered (see NoAnswerError).
	ErrNoAnswer = errors.New("kafka broker did not answer")
)

// explained is an error Explain produced: an explanation followed by the
// original error's text. It unwraps to both a sentinel and the original.
// It stores no secret: the message is built once, already scrubbed.
type explained struct {
	msg  string
	kind error
	err  error
}

func (e *explained) Error() string   { return e.msg }
func (e *explained) Unwrap() []error { return []error{e.kind, e.err} }

// Explain turns the obscure errors kafka-go returns for security problems
// into ones that say what went wrong, wrapping the original (errors.Is and
// errors.As still see it, plus ErrAuthentication or ErrTLS). Other errors
// are returned unchanged, and so is nil. The message never contains
// c.Password (should the original text contain it, that is replaced too).
//
// What it recognises:
//   - A rejected SASL login. kafka-go's Dialer reports it as
//     kafka.SASLAuthenticationFailed ("[58] SASL Authentication Failed"),
//     but its Transport (Client, Writer, Reader) only as
//     io.ErrUnexpectedEOF, because the broker closes the connection; with
//     SASL configured an EOF or connection reset is taken to mean that.
//   - The broker not enabling the mechanism (kafka.UnsupportedSASLMechanism).
//   - TLS failures: unknown CA, wrong host name, invalid certificate, a TLS
//     alert from the broker, a plaintext listener answering ("first record
//     does not look like a TLS handshake"), and a handshake that timed out
//     or was cut off (what a plaintext Kafka listener does to a TLS hello).
//   - Without SASL, an EOF: the listener may need SASL or TLS.
//   - A broker that accepted the connection and never sent a byte before
//     the read deadline (*NoAnswerError from this package's dialers):
//     "no answer from ADDR within N s" (ErrNoAnswer).
func Explain(err error, c Config) error {
	if err == nil {
		return nil
	}
	var done *explained
	if errors.As(err, &done) {
		return err
	}
	p := c.protocol()
	wrap := func(kind error, msg string) error {
		text := err.Error()
		if len(c.Password) >= 4 {
			text = strings.ReplaceAll(text, c.Password, Redacted)
		}
		return &explained{msg: msg + ": " + text, kind: kind, err: err}
	}

	// A Writer reports per-message failures as kafka.WriteErrors, which
	// does not unwrap; look at its first error.
	probe := err
	var we kafka.WriteErrors
	if errors.As(err, &we) {
		for _, e := range we {
			if e != nil {
				probe = e
				break
			}
		}
	}

	if msg, ok := explainTLS(probe, c); ok {
		return wrap(ErrTLS, msg)
	}
	var silent *NoAnswerError
	if errors.As(probe, &silent) {
		// The original text adds nothing but kafka-go's wording around it.
		return &explained{kind: ErrNoAnswer, err: err, msg: fmt.Sprintf(
			"kafka: %v: it accepted the TCP connection but did not answer a Kafka request (check that %s is a Kafka listener, with security.protocol %s, and that the broker is healthy; socket.connection.setup.timeout.ms sets how long to wait)",
			silent, silent.Addr, p)}
	}
	if p.UsesSASL() {
		who := fmt.Sprintf("mechanism %s as user %q", c.Mechanism, c.Username)
		switch {
		case errors.Is(probe, kafka.SASLAuthenticationFailed):
			return wrap(ErrAuthentication, "kafka: SASL authentication with "+who+" failed (check the username and password)")
		case closedByBroker(probe):
			msg := "kafka: SASL authentication with " + who + " failed (check the username and password; the broker closed the connection, which is how a rejected login shows through a kafka-go Transport"
			if p == SASLPlaintext {
				msg += "; if this listener uses TLS, set security.protocol=SASL_SSL"
			}
			msg += ")"
			return wrap(ErrAuthentication, msg)
		case errors.Is(probe, kafka.UnsupportedSASLMechanism):
			return wrap(ErrAuthentication, fmt.Sprintf("kafka: the broker does not enable SASL mechanism %s (check sasl.mechanism against the broker's sasl.enabled.mechanisms)", c.Mechanism))
		case errors.Is(probe, kafka.IllegalSASLState):
			return wrap(ErrAuthentication, "kafka: the broker refused the SASL exchange (illegal SASL state); check that this listener uses SASL (security.protocol)")
		}
		return err
	}
	if closedByBroker(probe) {
		return wrap(ErrConnectionClosed, fmt.Sprintf("kafka: the broker closed the connection without answering; if its listener requires SASL or TLS, set security.protocol accordingly (it is %s)", p))
	}
	return err
}

// closedByBroker reports whether err means the peer closed or reset the
// connection. kafka-go sometimes flattens errors to text, hence the
// string checks.
func closedByBroker(err error) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	s := err.Error()
	return strings.HasSuffix(s, "EOF") || strings.Contains(s, "connection reset by peer") || strings.Contains(s, "broken pipe")
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout())
}

func (c Config) trustDescription() string {
	switch {
	case c.CAFile != "":
		return fmt.Sprintf("the CA file %q", c.CAFile)
	case c.CAPEM != "":
		return "the inline CA certificates"
	}
	return "the system roots"
}

// explainTLS recognises TLS failures, whether they come from this
// package's dialers (*TLSError) or from crypto/tls used some other way.
func explainTLS(err error, c Config) (string, bool) {
	var te *TLSError
	inHandshake := errors.As(err, &te)
	if !inHandshake && !c.protocol().UsesTLS() {
		return "", false
	}
	broker := "the broker"
	if inHandshake {
		broker = "broker " + te.Addr
	}
	var (
		unknownCA   x509.UnknownAuthorityError
		hostErr     x509.HostnameError
		invalid     x509.CertificateInvalidError
		recordErr   tls.RecordHeaderError
		alert       tls.AlertError
		verifyError *tls.CertificateVerificationError
		s           = err.Error()
	)
	switch {
	case errors.As(err, &unknownCA) || strings.Contains(s, "certificate signed by unknown authority"):
		return fmt.Sprintf("kafka: TLS: the certificate of %s is not signed by a CA this client trusts (%s); point ssl.truststore.location or ssl.ca.location at the CA that signed it", broker, c.trustDescription()), true
	case errors.As(err, &hostErr):
		return fmt.Sprintf("kafka: TLS: the certificate of %s is not valid for the name %q; dial a name the certificate lists, set ssl.server.name, or set ssl.endpoint.identification.algorithm= (empty) to check only the CA chain", broker, hostErr.Host), true
	case errors.As(err, &invalid):
		return fmt.Sprintf("kafka: TLS: the certificate of %s is not valid (expired, not yet valid, or not for server use)", broker), true
	case errors.As(err, &verifyError):
		return fmt.Sprintf("kafka: TLS: the certificate of %s failed verification against %s", broker, c.trustDescription()), true
	case errors.As(err, &recordErr) || strings.Contains(s, "first record does not look like a TLS handshake"):
		return fmt.Sprintf("kafka: TLS: %s did not answer in TLS, so it is probably a plaintext listener; use security.protocol=PLAINTEXT or SASL_PLAINTEXT there, or the broker's TLS port", broker), true
	case errors.As(err, &alert) || strings.Contains(s, "remote error: tls: "):
		// A received alert is a *net.OpError{Op: "remote error"}; with TLS
		// 1.3 a missing client certificate is only reported on first read,
		// after the handshake.
		what := "an alert"
		if i := strings.Index(s, "remote error: tls: "); i >= 0 {
			what = strconv.Quote(s[i+len("remote error: "):])
		} else {
			what = strconv.Quote(alert.Error())
		}
		return fmt.Sprintf("kafka: TLS: %s rejected the handshake with %s; it may require a client certificate (ssl.keystore.location, or ssl.certificate.location with ssl.key.location), reject the one sent, or not accept TLS 1.2 or later", broker, what), true
	case inHandshake && isTimeout(err):
		return fmt.Sprintf("kafka: TLS: the handshake with %s timed out; a plaintext Kafka listener does not answer a TLS hello, so check the port and security.protocol (it is %s)", broker, c.protocol()), true
	case inHandshake && closedByBroker(err):
		return fmt.Sprintf("kafka: TLS: %s closed the connection during the handshake; it may be a plaintext listener (check the port and security.protocol, it is %s) or require a client certificate", broker, c.protocol()), true
	case inHandshake:
		return fmt.Sprintf("kafka: TLS: the handshake with %s failed", broker), true
	}
	return "", false
}
