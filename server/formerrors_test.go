package server

import (
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
)

// Two tags that break the tag rules, in one field, and their messages.
const (
	badTags     = "Bad Key=1\nempty="
	badKeyMsg   = `key "Bad Key": want lower-case letters`
	emptyValMsg = `key "empty": empty value`
)

// summaryItems are the lines of a form page's error summary.
func summaryItems(body string) []string {
	sum := regexp.MustCompile(`(?s)<div class="error-summary".*?</div>`).FindString(body)
	return regexp.MustCompile(`<li>`).FindAllString(sum, -1)
}

// TestFormsShowEveryError: a form posted with two errors on one field and
// errors on other fields shows every message, beside its field and in
// the summary, on the new-run form, the A/B form, the write-path form
// and the import form; the API's 400 lists them all in "errors", with
// "error" and "field" naming the first as before.
func TestFormsShowEveryError(t *testing.T) {
	ts := newTestServer(t, nil)

	t.Run("new-run form", func(t *testing.T) {
		rec := ts.formPost(t, "/runs", url.Values{"workload": {"producer"}, "num-records": {"lots"}, "meta": {badTags}, "target": {"embedded"}})
		body := html.UnescapeString(rec.Body.String())
		if rec.Code != http.StatusBadRequest {
			t.Fatalf("= %d, want 400", rec.Code)
		}
		for _, want := range []string{badKeyMsg, emptyValMsg, `"lots" is not`} {
			if !strings.Contains(body, want) {
				t.Errorf("the form does not show %q", want)
			}
		}
		meta := regexp.MustCompile(`(?s)<p class="field-error" id="f-meta-error">(.*?)</p>`).FindStringSubmatch(body)
		if meta == nil || !strings.Contains(meta[1], badKeyMsg) || !strings.Contains(meta[1], emptyValMsg) {
			t.Errorf("the metadata field shows %q, want both its errors", meta)
		}
		if n := len(summaryItems(body)); n != 3 {
			t.Errorf("the summary lists %d errors, want 3 (two of meta, one of num-records)", n)
		}
	})

	t.Run("A/B form", func(t *testing.T) {
		rec := ts.formPost(t, "/runs", url.Values{"workload": {"producer"}, "label": {"a"}, "target": {"embedded"},
			"configs[1].label": {"b"}, "configs[1].params": {"record-size=-5\nnum-records=0"}})
		body := html.UnescapeString(rec.Body.String())
		if rec.Code != http.StatusBadRequest {
			t.Fatalf("= %d, want 400", rec.Code)
		}
		field := regexp.MustCompile(`(?s)<p class="field-error" id="f-configs-1-params-error">(.*?)</p>`).FindStringSubmatch(body)
		if field == nil || !strings.Contains(field[1], "record-size") || !strings.Contains(field[1], "num-records") || !strings.Contains(field[1], "<br>") {
			t.Errorf("configuration B's options show %q, want both errors, one a line", field)
		}
		if n := len(summaryItems(body)); n != 2 {
			t.Errorf("the summary lists %d errors, want 2", n)
		}
	})

	t.Run("write-path form", func(t *testing.T) {
		rec := ts.formPost(t, "/writepath", url.Values{"requests": {"many"}, "record-size": {"abc"}, "sink": {"true"}})
		body := html.UnescapeString(rec.Body.String())
		if rec.Code != http.StatusBadRequest {
			t.Fatalf("= %d, want 400", rec.Code)
		}
		for _, id := range []string{"f-requests-error", "f-record-size-error"} {
			if !strings.Contains(body, `id="`+id+`"`) {
				t.Errorf("the form lacks %s", id)
			}
		}
		if n := len(summaryItems(body)); n != 2 {
			t.Errorf("the summary lists %d errors, want 2", n)
		}
	})

	t.Run("import form", func(t *testing.T) {
		token := csrfToken(t, ts)
		body, ct := multipartBody(map[string]string{"label": strings.Repeat("x", rundoc.MaxLabel+1), "meta": badTags, csrfField: token}, []byte("main;f 1\n"))
		rec := ts.do(t, "POST", "/import", body, "Content-Type", ct, "Cookie", csrfCookie+"="+token)
		page := html.UnescapeString(rec.Body.String())
		if rec.Code != http.StatusBadRequest {
			t.Fatalf("= %d, want 400", rec.Code)
		}
		for _, want := range []string{badKeyMsg, emptyValMsg, "label: must be at most"} {
			if !strings.Contains(page, want) {
				t.Errorf("the import page does not show %q", want)
			}
		}
		for _, id := range []string{"f-import-label", "f-import-meta"} {
			if !regexp.MustCompile(`id="` + id + `"[^>]*aria-invalid="true"`).MatchString(page) {
				t.Errorf("%s is not marked invalid", id)
			}
		}
	})

	t.Run("API", func(t *testing.T) {
		rec := ts.do(t, "POST", "/api/runs", `{"workload":"producer","meta":{"Bad Key":"1","empty":""},"params":{"num-records":0}}`)
		var resp struct {
			Error  string `json:"error"`
			Field  string `json:"field"`
			Errors []struct {
				Field string `json:"field"`
				Error string `json:"error"`
			} `json:"errors"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || rec.Code != http.StatusBadRequest {
			t.Fatalf("= %d %s", rec.Code, rec.Body)
		}
		byField := map[string]int{}
		for _, e := range resp.Errors {
			byField[e.Field]++
		}
		if byField["meta"] != 2 || byField["num-records"] != 1 || resp.Field == "" || resp.Error == "" || resp.Error != resp.Errors[0].Error {
			t.Errorf("400 = %s, want error and field naming the first, and errors listing meta's two and num-records'", rec.Body)
		}
	})
}
