package kafkasec

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/twmb/franz-go/pkg/kfake"
)

// Credentials seeded into every SASL test cluster.
var testUsers = []struct {
	mech       Mechanism
	user, pass string
}{
	{Plain, "alice", "alice-secret"},
	{ScramSHA256, "bob", "bob-secret-256"},
	{ScramSHA512, "carol", "carol-secret-512"},
}

// startCluster starts an in-process one-broker kfake cluster listening on
// loopback and returns its address.
func startCluster(t testing.TB, sasl bool, tlsCfg *tls.Config) string {
	t.Helper()
	opts := []kfake.Opt{kfake.NumBrokers(1), kfake.AllowAutoTopicCreation()}
	if sasl {
		opts = append(opts, kfake.EnableSASL())
		for _, u := range testUsers {
			opts = append(opts, kfake.Superuser(string(u.mech), u.user, u.pass))
		}
	}
	if tlsCfg != nil {
		opts = append(opts, kfake.TLS(tlsCfg))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		t.Fatalf("kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()[0]
}

// testPKI is a throw-away CA with a server and a client certificate, all
// written as PEM files into a temp dir.
type testPKI struct {
	dir        string
	caFile     string // CA certificate
	otherCA    string // an unrelated CA certificate
	serverCert tls.Certificate
	caPool     *x509.CertPool
	clientPEM  string // client chain + key in one file
	clientCert string // client chain only
	clientKey  string // client key only
	caPEM      string // CA certificate text
}

func newTestPKI(t testing.TB) *testPKI {
	t.Helper()
	dir := t.TempDir()
	caCert, caKey := newCA(t, "kbench test CA")
	otherCert, _ := newCA(t, "some other CA")
	p := &testPKI{dir: dir, caPool: x509.NewCertPool()}
	p.caPool.AddCert(caCert)
	p.caPEM = string(pemCert(caCert))
	p.caFile = writeFile(t, dir, "ca.pem", pemCert(caCert))
	p.otherCA = writeFile(t, dir, "other-ca.pem", pemCert(otherCert))

	srvCert, srvKey := newLeaf(t, caCert, caKey, "broker", x509.ExtKeyUsageServerAuth,
		[]string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")})
	p.serverCert = tls.Certificate{Certificate: [][]byte{srvCert.Raw}, PrivateKey: srvKey, Leaf: srvCert}

	cliCert, cliKey := newLeaf(t, caCert, caKey, "kbench client", x509.ExtKeyUsageClientAuth, nil, nil)
	keyDER, err := x509.MarshalPKCS8PrivateKey(cliKey)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	p.clientCert = writeFile(t, dir, "client-cert.pem", pemCert(cliCert))
	p.clientKey = writeFile(t, dir, "client-key.pem", keyPEM)
	p.clientPEM = writeFile(t, dir, "client.pem", append(append([]byte{}, keyPEM...), pemCert(cliCert)...))
	return p
}

// serverTLS is the broker side; clientAuth asks for client certificates.
func (p *testPKI) serverTLS(clientAuth tls.ClientAuthType) *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{p.serverCert},
		ClientAuth:   clientAuth,
		ClientCAs:    p.caPool,
		MinVersion:   tls.VersionTLS12,
	}
}

func newCA(t testing.TB, cn string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func newLeaf(t testing.TB, ca *x509.Certificate, caKey *ecdsa.PrivateKey, cn string, usage x509.ExtKeyUsage, dns []string, ips []net.IP) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		DNSNames:     dns,
		IPAddresses:  ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func pemCert(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func noEnv(string) string { return "" }

func mustConfig(t testing.TB, props map[string]string) Config {
	t.Helper()
	c, err := FromProperties(props, noEnv)
	if err != nil {
		t.Fatalf("FromProperties(%v): %v", rundoc.RedactProps(props), err)
	}
	return c
}
