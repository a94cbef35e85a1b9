package server

import (
	"github.com/kbench/kbench/internal/targets"
)

// checkTargets refuses a spec's bootstrap servers unless each is a
// well-formed host:port that the --allow-target policy (Config.Targets,
// package targets) allows, as a bad bootstrap-server field that says how
// to allow it.
func (s *Server) checkTargets(addrs []string) error {
	return targetInput(s.cfg.Targets.Allows(addrs))
}

// targetInput turns a refusal of package targets into a bad
// bootstrap-server field; one that serve's --allow-target would allow
// says so.
func targetInput(err error) error {
	if err == nil {
		return nil
	}
	return badInput("bootstrap-server", "%v", targets.Explain(err, "kbench serve"))
}
