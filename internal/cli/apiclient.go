package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// apiClient talks to a kbench server's JSON API: kbench import, kbench
// run --server and kbench check all go through it, so they send the
// token, read refusals and report an unreachable server alike.
type apiClient struct {
	base, token string
}

// refusal is a server's answer other than the one asked for: its status
// and message, and the line and column of the upload it names, if any.
type refusal struct {
	method, path string
	code         int
	status, msg  string
	line, column int
}

func (r *refusal) Error() string {
	if r.method == http.MethodGet {
		return fmt.Sprintf("GET %s: the server answered %s: %s", r.path, r.status, r.msg)
	}
	return fmt.Sprintf("the server refused it (%s): %s", r.status, r.msg)
}

// unreachable is a server that did not answer.
type unreachable struct {
	base string
	err  error
}

func (u *unreachable) Error() string {
	return fmt.Sprintf("cannot reach the kbench server at %s (start one with \"kbench serve\", or give --server): %v", u.base, u.err)
}

// do sends one request and returns the answer's body when its status is
// want; any other status is a *refusal, no answer an *unreachable. At most
// limit bytes of the answer are read.
func (c apiClient) do(ctx context.Context, method, path string, body []byte, contentType string, want int, timeout time.Duration, limit int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, &unreachable{c.base, err}
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, &unreachable{c.base, err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, &unreachable{c.base, fmt.Errorf("reading the answer: %w", err)}
	}
	if resp.StatusCode == want {
		return data, nil
	}
	var e struct {
		Error  string `json:"error"`
		Line   int    `json:"line"`
		Column int    `json:"column"`
	}
	msg := strings.TrimSpace(string(data))
	if json.Unmarshal(data, &e) == nil && e.Error != "" {
		msg = e.Error
	}
	if len(msg) > 2000 {
		msg = msg[:2000] + "…"
	}
	return nil, &refusal{method: method, path: path, code: resp.StatusCode, status: resp.Status, msg: msg, line: e.Line, column: e.Column}
}

// post sends a multipart body and returns the answer of a 201.
func (c apiClient) post(ctx context.Context, path string, body []byte, contentType string) ([]byte, error) {
	return c.do(ctx, http.MethodPost, path, body, contentType, http.StatusCreated, 2*time.Minute, 16<<20)
}

// get fetches path (with its query) and decodes the JSON answer of a 200
// into v.
func (c apiClient) get(ctx context.Context, path string, v any) error {
	data, err := c.do(ctx, http.MethodGet, path, nil, "", http.StatusOK, time.Minute, 64<<20)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("GET %s: unexpected answer: %w", path, err)
	}
	return nil
}
