package netcut

import (
	"bufio"
	"net"
	"testing"
	"time"
)

// echo serves lines back on a loopback port.
func echo(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					c.Write(append(sc.Bytes(), '\n'))
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func roundTrip(c net.Conn, line string) (string, error) {
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(line + "\n")); err != nil {
		return "", err
	}
	return bufio.NewReader(c).ReadString('\n')
}

// TestCutAndRestore: a connection through the proxy works; Cut breaks it
// and closes new ones; Restore lets new ones through again.
func TestCutAndRestore(t *testing.T) {
	p, err := Start(echo(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := roundTrip(c, "hello"); err != nil || got != "hello\n" {
		t.Fatalf("through the proxy: %q, %v", got, err)
	}
	p.Cut()
	if _, err := roundTrip(c, "again"); err == nil {
		t.Error("a connection survived Cut")
	}
	d, err := net.Dial("tcp", p.Addr())
	if err == nil {
		if _, err := roundTrip(d, "new"); err == nil {
			t.Error("a new connection worked while cut")
		}
		d.Close()
	}
	p.Restore()
	e, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if got, err := roundTrip(e, "back"); err != nil || got != "back\n" {
		t.Errorf("after Restore: %q, %v", got, err)
	}
}
