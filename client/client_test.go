package client

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestRequests: each method asks the route it names with the token and
// decodes the answer; the body of a POST reaches the server as sent.
func TestRequests(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = append(got, r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("Authorization")+" "+r.Header.Get("Content-Type")+" "+string(body))
		w.Header().Set("Content-Type", "application/json")
		switch r.Method + " " + r.URL.Path {
		case "GET /api/runs/7":
			_, _ = io.WriteString(w, `{"id":7,"status":"succeeded","metrics":[{"name":"records_per_sec","value":5,"unit":"rec/s","better":"higher"}]}`)
		case "GET /api/runs":
			_, _ = io.WriteString(w, `{"runs":[{"id":2},{"id":1}],"total":2,"offset":0,"limit":50,"next":null,"prev":null}`)
		case "POST /api/runs":
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"id":3,"status":"queued","url":"/runs/3","runs":[{"id":3}]}`)
		case "POST /api/runs/3/cancel":
			w.WriteHeader(http.StatusAccepted)
			_, _ = io.WriteString(w, `{"id":3,"canceling":true}`)
		case "POST /api/import":
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"id":4,"url":"/runs/4"}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := New(srv.URL+"/", "sekrit")
	ctx := t.Context()

	r, err := c.Run(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := r.Metric("records_per_sec"); !ok || m.Value != 5 || m.Better != HigherIsBetter || r.Status != StatusSucceeded {
		t.Errorf("run %+v, metric %+v %v", r, m, ok)
	}
	if _, ok := r.Metric("p99_ms"); ok {
		t.Error("a metric the run lacks was found")
	}
	l, err := c.Runs(ctx, url.Values{"label": {"a b"}})
	if err != nil || len(l.Runs) != 2 || l.Total != 2 {
		t.Errorf("runs %+v, %v", l, err)
	}
	cr, err := c.CreateRuns(ctx, CreateRuns{Workload: "producer", Label: "x"})
	if err != nil || cr.ID != 3 || cr.URL != "/runs/3" || len(cr.Runs) != 1 {
		t.Errorf("created %+v, %v", cr, err)
	}
	cn, err := c.CancelRun(ctx, 3)
	if err != nil || !cn.Canceling || cn.ID != 3 {
		t.Errorf("cancel %+v, %v", cn, err)
	}
	ir, err := c.Import(ctx, []byte("--b--"), "multipart/form-data; boundary=b")
	if err != nil || ir.URL != "/runs/4" {
		t.Errorf("import %+v, %v", ir, err)
	}
	want := []string{
		"GET /api/runs/7 Bearer sekrit  ",
		"GET /api/runs?label=a+b Bearer sekrit  ",
		`POST /api/runs Bearer sekrit application/json {"workload":"producer","label":"x","repetitions":0,"warmup_runs":0,"params":null}`,
		"POST /api/runs/3/cancel Bearer sekrit  ",
		"POST /api/import Bearer sekrit multipart/form-data; boundary=b --b--",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestErrors: a refusal is an *Error with the status and the server's
// message (its JSON "error", else the answer's text), the cell it names;
// no server is an *UnreachableError with the client's hint.
func TestErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/import/csv":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":"file: bad number","field":"file","errors":[{"field":"file","error":"file: bad number"}],"line":3,"column":2}`)
		default:
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, "  <html>proxy down</html>\n")
		}
	}))
	defer srv.Close()
	c := New(srv.URL, "")
	ctx := t.Context()

	_, err := c.ImportCSV(ctx, nil, "text/csv")
	var e *Error
	if !errors.As(err, &e) || e.StatusCode != http.StatusBadRequest || e.Message != "file: bad number" || e.Body.Line != 3 || e.Body.Column != 2 ||
		len(e.Body.Errors) != 1 || e.Body.Field != "file" {
		t.Fatalf("err %#v", err)
	}
	if want := "the server refused it (400 Bad Request): file: bad number"; err.Error() != want {
		t.Errorf("message %q, want %q", err.Error(), want)
	}
	_, err = c.Run(ctx, 1)
	if StatusCode(err) != http.StatusBadGateway {
		t.Errorf("status %d of %v", StatusCode(err), err)
	}
	if want := "GET /api/runs/1: the server answered 502 Bad Gateway: <html>proxy down</html>"; err == nil || err.Error() != want {
		t.Errorf("message %v, want %q", err, want)
	}
	if StatusCode(errors.New("other")) != 0 {
		t.Error("a status for an error that is no answer")
	}

	gone := New("http://127.0.0.1:1", "")
	gone.UnreachableHint = "start one"
	_, err = gone.Run(ctx, 1)
	var ue *UnreachableError
	if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "cannot reach the kbench server at http://127.0.0.1:1 (start one): ") {
		t.Errorf("err %v", err)
	}
}
