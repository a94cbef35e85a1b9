// The windows of a run's windowed client CPU profile, for the run page's
// time-range selection.

package server

import (
	"context"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/profiles"
	"github.com/kbench/kbench/ui"
)

// profileWindows gives the run page the windows of run's first client
// CPU (or JFR wall) profile when its samples carry window labels. A
// profile that cannot be read leaves the page without selection: the
// profile's own page says what is wrong with it.
func (s *Server) profileWindows(ctx context.Context, run *rundoc.Run, v *ui.RunView) {
	for _, kind := range []rundoc.ProfileKind{rundoc.KindCPU, rundoc.KindWall} {
		for _, p := range run.Profiles {
			if p.Role != rundoc.RoleClient || p.Kind != kind {
				continue
			}
			lp, err := s.loadProfile(ctx, p.ID)
			if err != nil {
				return
			}
			ws := profiles.Windows(lp.prof)
			if len(ws) == 0 {
				return
			}
			out := make([]ui.WindowRange, len(ws))
			for i, w := range ws {
				out[i] = ui.WindowRange{Name: w.Name, Start: w.Start, End: w.End}
			}
			v.SetProfileWindows(p.ID, out)
			return
		}
	}
}
