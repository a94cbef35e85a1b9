package kafkasec

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFromPropertiesOpensNoFile: validating properties never opens the
// files they name (a server validates requests with it): /dev/zero, a
// FIFO nobody writes to, a directory and a missing path all pass with
// the same Config but for the path, and only Load, in the client's
// process, reads them and refuses each at once.
func TestFromPropertiesOpensNoFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	paths := map[string]string{"/dev/zero": "not a regular file", fifo: "not a regular file", dir: "not a regular file",
		filepath.Join(dir, "missing.pem"): "no such file"}
	for path, loadErr := range paths {
		for _, typ := range []string{"PEM", ""} {
			props := map[string]string{PropSecurityProtocol: "SSL", PropTruststoreLocation: path}
			if typ != "" {
				props[PropTruststoreType] = typ
			}
			// A FIFO would block an open: run it aside so that a
			// regression fails the test rather than hangs it.
			type answer struct {
				c   Config
				err error
			}
			done := make(chan answer, 1)
			go func() {
				c, err := FromProperties(props, noEnv)
				done <- answer{c, err}
			}()
			var a answer
			select {
			case a = <-done:
			case <-time.After(time.Minute):
				t.Fatalf("FromProperties(%s) is blocked: it opened the file", path)
			}
			if a.err != nil {
				t.Errorf("FromProperties(%s, type %q): %v; want no error, the file is not its to read", path, typ, a.err)
				continue
			}
			if a.c.CAFile != path {
				t.Errorf("CAFile = %q, want %q", a.c.CAFile, path)
			}
			go func() {
				c, err := a.c.Load()
				done <- answer{c, err}
			}()
			select {
			case a = <-done:
			case <-time.After(time.Minute):
				t.Fatalf("Load(%s) is blocked", path)
			}
			if a.err == nil || !strings.Contains(a.err.Error(), loadErr) || !strings.Contains(a.err.Error(), PropTruststoreLocation) {
				t.Errorf("Load(%s) = %v, want an error naming %s saying %q", path, a.err, PropTruststoreLocation, loadErr)
			} else if strings.Contains(a.err.Error(), path) {
				t.Errorf("Load error %q repeats the path", a.err)
			}
		}
	}
}

// TestLoadRefusesOversizedFile: a TLS file larger than MaxFileSize is
// refused with an error that says the limit, before it is read; one of
// MaxFileSize bytes is read (and then judged as PEM).
func TestLoadRefusesOversizedFile(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.pem")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileSize + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	c, err := FromProperties(map[string]string{PropSecurityProtocol: "SSL", PropCALocation: big}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Load()
	if err == nil || !strings.Contains(err.Error(), "1 MiB") || !strings.Contains(err.Error(), PropCALocation) {
		t.Fatalf("Load of a %d-byte file: %v, want an error naming %s and the 1 MiB limit", MaxFileSize+1, err, PropCALocation)
	}
	if err := os.Truncate(big, MaxFileSize); err != nil {
		t.Fatal(err)
	}
	_, err = c.Load()
	if err == nil || strings.Contains(err.Error(), "1 MiB") || !strings.Contains(err.Error(), "no PEM data") {
		t.Errorf("Load of a %d-byte file of zeros: %v, want it read and refused as not PEM", MaxFileSize, err)
	}
}

// TestLoadReadsOnce: a loaded Config dials with what Load read, so a
// file changed or removed afterwards changes nothing.
func TestLoadReadsOnce(t *testing.T) {
	f := writeTLSFiles(t)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	data, err := os.ReadFile(f.ca)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ca, data, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := FromProperties(map[string]string{PropSecurityProtocol: "SSL", PropCALocation: ca,
		PropCertificateLocation: f.cert, PropKeyLocation: f.key}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := c.Load()
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(ca)
	if tc, err := loaded.TLSConfig(); err != nil || tc.RootCAs == nil || len(tc.Certificates) != 1 {
		t.Errorf("TLSConfig after Load, the CA file removed: %v, %v", tc, err)
	}
	if _, err := c.TLSConfig(); err == nil {
		t.Error("the Config not loaded still read the removed file")
	}
}

func TestCheckPath(t *testing.T) {
	for _, p := range []string{"/etc/kafka/ca.pem", "ca.pem", "C:\\certs\\ca.pem", "/a b/ü.pem"} {
		if err := CheckPath(PropCALocation, p); err != nil {
			t.Errorf("CheckPath(%q): %v", p, err)
		}
	}
	for _, p := range []string{"/etc/ca.pem\n", "/x\x00y", "/x\ty", strings.Repeat("a", MaxPathLen+1), "\xff"} {
		err := CheckPath(PropCALocation, p)
		if err == nil || !strings.Contains(err.Error(), PropCALocation) {
			t.Errorf("CheckPath(%q) = %v, want an error naming the property", p, err)
		}
	}
}
