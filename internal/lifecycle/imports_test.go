package lifecycle

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestNoHTTPNorDatabase: the lifecycle knows neither HTTP nor the
// database. It links no gin at all, and imports neither net/http nor GORM
// itself: it reaches the database only through the store's methods.
func TestNoHTTPNorDatabase(t *testing.T) {
	list := func(format string) []string {
		t.Helper()
		out, err := exec.Command("go", "list", "-f", format, "github.com/kbench/kbench/internal/lifecycle").CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		return strings.Fields(string(out))
	}
	for _, dep := range list(`{{join .Deps "\n"}}`) {
		if strings.HasPrefix(dep, "github.com/gin-gonic/") {
			t.Errorf("lifecycle links %s", dep)
		}
	}
	imports := list(`{{join .Imports "\n"}}`)
	for _, banned := range []string{"net/http", "gorm.io/gorm", "github.com/gin-gonic/gin"} {
		if slices.Contains(imports, banned) {
			t.Errorf("lifecycle imports %s", banned)
		}
	}
	if !slices.Contains(imports, "github.com/kbench/kbench/internal/store") {
		t.Errorf("lifecycle does not import the store; the check above looks at the wrong package: %v", imports)
	}
}
