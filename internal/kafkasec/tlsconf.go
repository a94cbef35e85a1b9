package kafkasec

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"syscall"
)

// sourceNames says how to call each Config field in error messages: by its
// Go name when the Config was built by hand, by the property it came from
// when it was built by FromProperties.
type sourceNames struct {
	caFile, caPEM, certFile, certPEM, keyFile, keyPEM string
}

var fieldNames = sourceNames{
	caFile: "CAFile", caPEM: "CAPEM",
	certFile: "CertFile", certPEM: "CertPEM",
	keyFile: "KeyFile", keyPEM: "KeyPEM",
}

// TLSConfig returns the client TLS configuration for c, or nil when the
// protocol does not use TLS. It loads the CA and client key pair (see
// Load for the files), so it reports unreadable or malformed PEM here
// rather than at dial time.
//
// TLS 1.2 is the minimum (Kafka's default ssl.enabled.protocols is
// TLSv1.2,TLSv1.3). When ServerName is empty, the Dialer and Transport of
// this package fill it in per connection from the broker's host.
func (c Config) TLSConfig() (*tls.Config, error) {
	if err := c.checkProtocol(); err != nil {
		return nil, err
	}
	return c.tlsConfig(c.srcNames())
}

// srcNames are the names of c's TLS fields in messages: the properties
// they came from when FromProperties built c, else the Go fields'.
func (c Config) srcNames() sourceNames {
	if c.fromProps {
		return c.names
	}
	return fieldNames
}

// MaxFileSize is the largest TLS file (CA bundle, certificate chain,
// key) a client reads: 1 MiB, some hundred times the size of a usual CA
// bundle, so a path naming /dev/zero or a huge file fails at once
// instead of filling the memory.
const MaxFileSize = 1 << 20

// Load reads the TLS files c names, each a regular file of at most
// MaxFileSize, and returns c holding their contents, checked as a dial
// would check them: a run reads its files once, when it starts, and
// says there what is wrong with them. FromProperties never reads a file,
// so that validating properties (as a server does for a request) opens
// nothing; Load is for the process that runs the client. A Config that
// names no file is returned as it is.
func (c Config) Load() (Config, error) {
	if c.loaded || !c.protocol().UsesTLS() {
		return c, nil
	}
	n := c.srcNames()
	if c.CAFile != "" {
		data, err := readPEMFile(n.caFile, c.CAFile, c.untypedCA)
		if err != nil {
			return Config{}, err
		}
		c.caData = string(data)
	}
	if c.CertFile != "" {
		data, err := readPEMFile(n.certFile, c.CertFile, c.untypedKeystore)
		if err != nil {
			return Config{}, err
		}
		c.certData = string(data)
	}
	if c.KeyFile != "" && c.KeyFile != c.CertFile {
		data, err := readPEMFile(n.keyFile, c.KeyFile, "")
		if err != nil {
			return Config{}, err
		}
		c.keyData = string(data)
	}
	c.loaded = true
	if _, err := c.tlsConfig(n); err != nil {
		return Config{}, err
	}
	return c, nil
}

// file is the content of the TLS file at path, for the field called
// name: what Load read, else the file itself.
func (c Config) file(name, path, loaded, typeProp string) ([]byte, error) {
	if c.loaded {
		return []byte(loaded), nil
	}
	return readPEMFile(name, path, typeProp)
}

func (c Config) tlsConfig(n sourceNames) (*tls.Config, error) {
	if !c.protocol().UsesTLS() {
		for _, f := range []struct {
			set  bool
			name string
		}{
			{c.CAFile != "", n.caFile}, {c.CAPEM != "", n.caPEM},
			{c.CertFile != "", n.certFile}, {c.CertPEM != "", n.certPEM},
			{c.KeyFile != "", n.keyFile}, {c.KeyPEM != "", n.keyPEM},
			{c.ServerName != "", "ServerName"},
		} {
			if f.set {
				return nil, fmt.Errorf("kafkasec: %s is set but security.protocol=%s does not use TLS (use SSL or SASL_SSL)", f.name, c.protocol())
			}
		}
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName}

	if c.CAFile != "" && c.CAPEM != "" {
		return nil, fmt.Errorf("kafkasec: set only one of %s and %s", n.caFile, n.caPEM)
	}
	switch {
	case c.CAFile != "":
		data, err := c.file(n.caFile, c.CAFile, c.caData, c.untypedCA)
		if err != nil {
			return nil, err
		}
		if tc.RootCAs, err = certPool(n.caFile, data); err != nil {
			return nil, err
		}
	case c.CAPEM != "":
		var err error
		if tc.RootCAs, err = certPool(n.caPEM, []byte(c.CAPEM)); err != nil {
			return nil, err
		}
	}

	cert, err := c.keyPair(n)
	if err != nil {
		return nil, err
	}
	if cert != nil {
		tc.Certificates = []tls.Certificate{*cert}
	}

	switch {
	case c.InsecureSkipVerify:
		tc.InsecureSkipVerify = true
	case c.SkipHostnameVerification:
		// Go can only turn off chain and host checks together, so turn
		// both off and verify the chain ourselves, without a DNS name.
		roots := tc.RootCAs // nil: system roots
		tc.InsecureSkipVerify = true
		tc.VerifyConnection = func(cs tls.ConnectionState) error {
			return verifyChainOnly(cs.PeerCertificates, roots)
		}
	}
	return tc, nil
}

func verifyChainOnly(certs []*x509.Certificate, roots *x509.CertPool) error {
	if len(certs) == 0 {
		return errors.New("tls: broker sent no certificate")
	}
	opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool()}
	for _, ic := range certs[1:] {
		opts.Intermediates.AddCert(ic)
	}
	if _, err := certs[0].Verify(opts); err != nil {
		return &tls.CertificateVerificationError{UnverifiedCertificates: certs, Err: err}
	}
	return nil
}

func (c Config) keyPair(n sourceNames) (*tls.Certificate, error) {
	if c.CertFile != "" && c.CertPEM != "" {
		return nil, fmt.Errorf("kafkasec: set only one of %s and %s", n.certFile, n.certPEM)
	}
	if c.KeyFile != "" && c.KeyPEM != "" {
		return nil, fmt.Errorf("kafkasec: set only one of %s and %s", n.keyFile, n.keyPEM)
	}
	var certPEM, keyPEM []byte
	certName, keyName := n.certFile, n.keyFile
	switch {
	case c.CertFile != "":
		data, err := c.file(n.certFile, c.CertFile, c.certData, c.untypedKeystore)
		if err != nil {
			return nil, err
		}
		certPEM = data
	case c.CertPEM != "":
		certPEM, certName = []byte(c.CertPEM), n.certPEM
	}
	switch {
	case c.KeyFile != "" && c.KeyFile == c.CertFile:
		keyPEM = certPEM
	case c.KeyFile != "":
		data, err := c.file(n.keyFile, c.KeyFile, c.keyData, "")
		if err != nil {
			return nil, err
		}
		keyPEM = data
	case c.KeyPEM != "":
		keyPEM, keyName = []byte(c.KeyPEM), n.keyPEM
	}
	switch {
	case certPEM == nil && keyPEM == nil:
		return nil, nil
	case keyPEM == nil:
		// The certificate file may hold the key too.
		if !hasPrivateKey(certPEM) {
			return nil, fmt.Errorf("kafkasec: %s has no private key; set %s too", certName, keyName)
		}
		keyPEM, keyName = certPEM, certName
	case certPEM == nil:
		return nil, fmt.Errorf("kafkasec: %s is set but no client certificate is; set %s too", keyName, certName)
	}

	certBlocks, err := pemBlocks(certPEM)
	if err != nil {
		return nil, fmt.Errorf("kafkasec: %s: %v", certName, err)
	}
	keyBlocks, err := pemBlocks(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("kafkasec: %s: %v", keyName, err)
	}
	var chain, key []byte
	for _, b := range certBlocks {
		if b.Type == "CERTIFICATE" {
			chain = append(chain, pem.EncodeToMemory(b)...)
		}
	}
	if chain == nil {
		return nil, fmt.Errorf("kafkasec: %s holds no PEM CERTIFICATE block", certName)
	}
	for _, b := range keyBlocks {
		if isEncryptedKey(b) {
			return nil, fmt.Errorf("kafkasec: %s holds an encrypted private key, which is not supported; decrypt it (e.g. openssl pkey -in key.pem -out key-plain.pem)", keyName)
		}
		if strings.HasSuffix(b.Type, "PRIVATE KEY") && key == nil {
			key = pem.EncodeToMemory(b)
		}
	}
	if key == nil {
		return nil, fmt.Errorf("kafkasec: %s holds no PEM PRIVATE KEY block", keyName)
	}
	pair, err := tls.X509KeyPair(chain, key)
	if err != nil {
		// crypto/tls errors name block types, never key material.
		return nil, fmt.Errorf("kafkasec: client key pair from %s and %s: %w", certName, keyName, err)
	}
	return &pair, nil
}

func isEncryptedKey(b *pem.Block) bool {
	return b.Type == "ENCRYPTED PRIVATE KEY" || strings.Contains(b.Headers["Proc-Type"], "ENCRYPTED")
}

func hasPrivateKey(data []byte) bool {
	blocks, err := pemBlocks(data)
	if err != nil {
		return false
	}
	for _, b := range blocks {
		if strings.HasSuffix(b.Type, "PRIVATE KEY") {
			return true
		}
	}
	return false
}

func certPool(name string, data []byte) (*x509.CertPool, error) {
	blocks, err := pemBlocks(data)
	if err != nil {
		return nil, fmt.Errorf("kafkasec: %s: %v", name, err)
	}
	pool := x509.NewCertPool()
	n := 0
	for _, b := range blocks {
		if b.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("kafkasec: %s: certificate %d: %w", name, n+1, err)
		}
		pool.AddCert(cert)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("kafkasec: %s holds no PEM CERTIFICATE block", name)
	}
	return pool, nil
}

// readPEMFile reads the TLS file at path for the property (or field)
// name: a regular file of at most MaxFileSize bytes. It opens without
// blocking, so a FIFO is refused rather than waited on. typeProp, when
// set, is the store type property left unset beside the location: the
// file must then be PEM. Messages name the property, never the path,
// which its user knows.
func readPEMFile(name, path, typeProp string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("kafkasec: %s: cannot open the file: %w", name, pathless(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("kafkasec: %s: cannot read the file: %w", name, pathless(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("kafkasec: %s: not a regular file: give a PEM file", name)
	}
	if fi.Size() > MaxFileSize {
		return nil, fmt.Errorf("kafkasec: %s: the file has %d bytes, more than the %d (1 MiB) kbench reads for a PEM file", name, fi.Size(), MaxFileSize)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("kafkasec: %s: cannot read the file: %w", name, pathless(err))
	}
	if len(data) > MaxFileSize {
		// It grew while read.
		return nil, fmt.Errorf("kafkasec: %s: the file has more than the %d bytes (1 MiB) kbench reads for a PEM file", name, MaxFileSize)
	}
	if typeProp != "" && !bytes.Contains(data, []byte("-----BEGIN ")) {
		return nil, fmt.Errorf("kafkasec: %s is not PEM and %s is unset (Kafka's default type is JKS, which kbench cannot read); convert it to PEM and set %s=PEM (%s)", name, typeProp, typeProp, convertHint)
	}
	if kind := binaryStoreKind(data); kind != "" {
		return nil, fmt.Errorf("kafkasec: %s: the file looks like a %s, not PEM; convert it to PEM (%s)", name, kind, convertHint)
	}
	return data, nil
}

// pathless is err without the path an *fs.PathError carries.
func pathless(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

const convertHint = "for a JKS or PKCS12 store: keytool -importkeystore -srckeystore store.jks -destkeystore store.p12 -deststoretype PKCS12, then openssl pkcs12 -in store.p12 -nodes -out store.pem"

// binaryStoreKind recognises key stores that are not PEM.
func binaryStoreKind(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte{0xFE, 0xED, 0xFE, 0xED}):
		return "JKS key store"
	case bytes.HasPrefix(data, []byte{0xCE, 0xCE, 0xCE, 0xCE}):
		return "JCEKS key store"
	case len(data) > 0 && data[0] == 0x30 && !bytes.Contains(data, []byte("-----BEGIN")):
		return "DER or PKCS12 file"
	}
	return ""
}

// pemAny finds PEM blocks even when their line breaks were lost, as happens
// with inline values in .properties files (Kafka accepts those too).
var pemAny = regexp.MustCompile(`(?s)-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END ([A-Z0-9 ]+)-----`)

// pemBlocks decodes every PEM block in data. Blocks whose body lost its
// newlines are re-wrapped first; blocks with headers are decoded as they are.
func pemBlocks(data []byte) ([]*pem.Block, error) {
	matches := pemAny.FindAllSubmatchIndex(data, -1)
	if len(matches) == 0 {
		return nil, errors.New("no PEM data found")
	}
	var out []*pem.Block
	for i, m := range matches {
		typ := string(data[m[2]:m[3]])
		if endTyp := string(data[m[6]:m[7]]); endTyp != typ {
			return nil, fmt.Errorf("PEM block %d: BEGIN %s does not match END %s", i+1, typ, endTyp)
		}
		raw := data[m[0]:m[1]]
		if b, _ := pem.Decode(raw); b != nil {
			out = append(out, b)
			continue
		}
		body := data[m[4]:m[5]]
		if bytes.Contains(body, []byte(":")) {
			return nil, fmt.Errorf("PEM block %d (%s) is malformed", i+1, typ)
		}
		// Drop whitespace and literal "\n" sequences, then decode.
		clean := bytes.ReplaceAll(body, []byte(`\n`), nil)
		clean = bytes.ReplaceAll(clean, []byte(`\r`), nil)
		clean = bytes.Map(func(r rune) rune {
			if r <= ' ' {
				return -1
			}
			return r
		}, clean)
		der, err := base64.StdEncoding.DecodeString(string(clean))
		if err != nil {
			return nil, fmt.Errorf("PEM block %d (%s) has invalid base64", i+1, typ)
		}
		out = append(out, &pem.Block{Type: typ, Bytes: der})
	}
	return out, nil
}
