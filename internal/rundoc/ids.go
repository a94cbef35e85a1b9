package rundoc

import (
	"strconv"
	"strings"
)

// JoinIDs writes run ids as the API's lists hold them ("3,4,5": the
// base_runs and target_runs of a run-set comparison, the runs of
// /compare). The pages, the Go client and the regressions' function
// naming write them this one way.
func JoinIDs(ids []uint) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatUint(uint64(id), 10))
	}
	return b.String()
}
