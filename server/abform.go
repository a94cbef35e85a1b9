package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/kbench/kbench/internal/launch"
	"github.com/kbench/kbench/internal/rundoc"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/ui"
)

// The new-run form's configurations to compare (ui/abtest.go) are sent as
// an A/B submission: the form's own options are configuration A, and each
// added one is A's options with those it lists changed. Its errors come
// back named as the API names them ("configs[1].params.throughput") and
// are shown beside the field they came from.

// createABForm handles a new-run form with added configurations: 303 to
// the comparison of their runs, or the form again with every bad field
// named.
func (s *Server) createABForm(c *gin.Context, form url.Values, added []ui.FormConfig) {
	var errs rundoc.FieldErrors
	base, err := requestFromForm(form)
	if err := errs.Append(err); err != nil {
		s.fail(c, err)
		return
	}
	req := launch.Request{Workload: base.Workload, Repetitions: base.Repetitions, WarmupRuns: base.WarmupRuns, Meta: base.Meta, Queue: base.Queue,
		Workers: base.Workers, BarrierTimeoutS: base.BarrierTimeoutS, Configs: []launch.Config{{Label: base.Label, Params: base.Params, Target: base.Target}}}
	// formIndex maps a configuration of the request to its fieldset on the
	// form: blank fieldsets are no configuration.
	formIndex := []int{0}
	for i, fc := range added {
		if fc.Blank() {
			continue
		}
		params, err := overrideParams(base.Params, fc.Params, ui.ConfigField(i+1, "params"))
		if err := errs.Append(err); err != nil {
			s.fail(c, err)
			return
		}
		req.Configs = append(req.Configs, launch.Config{Label: fc.Label, Params: params, Target: base.Target})
		formIndex = append(formIndex, i+1)
	}
	var res *launch.ABResult
	if len(errs) == 0 {
		res, err = s.launcher.CreateAB(c.Request.Context(), &req)
	} else {
		_, err = s.launcher.PrepareConfigs(&req)
	}
	if err := errs.Append(err); err != nil {
		s.fail(c, err)
		return
	}
	if len(errs) > 0 {
		fe := abFormErrors(errs, formIndex)
		v := s.newRunForm(c.Request.Context(), form, fe)
		v.Page = s.page(c, "New run")
		s.render(c, http.StatusBadRequest, "new_run", v)
		return
	}
	c.Redirect(http.StatusSeeOther, groupsCompareURL(res.Runs, res.Groups))
}

var (
	configErrRE = regexp.MustCompile(`^configs\[([0-9]+)\]\.(label|workload|params|target)(?:\.(.+))?$`)
	configRefRE = regexp.MustCompile(`configs\[([0-9]+)\]`)
)

// abFormErrors maps the errors of an A/B submission made from the form to
// the form's fields: configuration A's to the form's own (its label, its
// options), the target's (shared by all) to the target's fields, an added
// configuration's to its label or its options box, the option named in
// the message. Several errors of one field are each kept, one a line.
func abFormErrors(errs rundoc.FieldErrors, formIndex []int) map[string]string {
	out := map[string]string{}
	add := func(field, msg string) { out[field] = joinLines(out[field], msg) }
	formOf := func(i int) int {
		if i < len(formIndex) {
			return formIndex[i]
		}
		return 0
	}
	// Messages name configurations as the form does.
	rename := func(msg string) string {
		return configRefRE.ReplaceAllStringFunc(msg, func(ref string) string {
			i, _ := strconv.Atoi(configRefRE.FindStringSubmatch(ref)[1])
			return "configuration " + ui.ConfigLetter(formOf(i))
		})
	}
	for _, fe := range errs {
		msg := rename(fe.Msg)
		m := configErrRE.FindStringSubmatch(fe.Field)
		if m == nil {
			add(fe.Field, msg)
			continue
		}
		i, _ := strconv.Atoi(m[1])
		form := formOf(i)
		if m[3] != "" && m[2] == "params" && form > 0 {
			msg = m[3] + ": " + msg
		}
		switch {
		case m[2] == "target":
			add(strings.ReplaceAll(m[3], "_", "-"), msg)
		case form == 0 && m[2] == "params":
			add(m[3], msg)
		case form == 0:
			add(m[2], msg)
		case m[2] == "params":
			add(ui.ConfigField(form, "params"), msg)
		default:
			add(ui.ConfigField(form, "label"), msg)
		}
	}
	return out
}

// overrideParams is base with the options of text changed: one
// name=value a line ("--name=value" too), blank lines and "#" comments
// skipped. A Kafka properties option (producer-props=k=v) replaces that
// key only, keeping base's other properties; any other option replaces
// base's value. Lines that are not name=value are reported under field,
// with their line number; the values themselves are the runner's to judge.
func overrideParams(base map[string]json.RawMessage, text, field string) (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(base))
	for k, v := range base {
		out[k] = v
	}
	kinds := map[string]string{}
	for _, f := range rundoc.Flags() {
		kinds[f.Name] = f.Kind
	}
	var errs rundoc.FieldErrors
	var bad []string
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(strings.TrimPrefix(line, "--"), "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" {
			bad = append(bad, fmt.Sprintf("line %d: %q is not name=value (e.g. record-size=64)", n+1, line))
			continue
		}
		var raw any = value
		if kinds[name] == "props" {
			props, err := mergeProps(out[name], value)
			if err != nil {
				return nil, err
			}
			raw = props
		}
		b, err := json.Marshal(raw)
		if err != nil {
			return nil, fmt.Errorf("server: encode option %s: %w", name, err)
		}
		out[name] = b
	}
	if len(bad) > 0 {
		errs.Add(field, "%s", strings.Join(bad, "; "))
	}
	return out, errs.Err()
}

// mergeProps sets one k=v in a props option as the form sends it (a JSON
// list of "k=v"), replacing the same key.
func mergeProps(list json.RawMessage, kv string) ([]string, error) {
	var props []string
	if len(list) > 0 {
		if err := json.Unmarshal(list, &props); err != nil {
			return nil, fmt.Errorf("server: read form properties: %w", err)
		}
	}
	key, _, _ := strings.Cut(kv, "=")
	key = strings.TrimSpace(key)
	out := make([]string, 0, len(props)+1)
	for _, p := range props {
		if k, _, _ := strings.Cut(p, "="); strings.TrimSpace(k) != key {
			out = append(out, p)
		}
	}
	return append(out, kv), nil
}
