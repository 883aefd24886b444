package assemble

import (
	"os"
	"testing"

	"marquee/store/storetest"
)

// TestMain drops the process's template databases once every test has run.
func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }
