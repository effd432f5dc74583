package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/rfmkit/rfm/internal/linalg"
)

func cmdVersion(e *env, args []string) error {
	f := helpFlagSet("version", "rfm version")
	if err := f.ParseFlags(args, e.stdout); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "rfm %s\ngo %s %s/%s\nbackend %s (%d threads)\n", versionString(), runtime.Version(), runtime.GOOS, runtime.GOARCH, linalg.Backend(), linalg.Threads())
	return nil
}

// versionString is the -ldflags version, else the module version and VCS
// revision from the build information.
func versionString() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 && v == "(devel)" {
			v += " " + s.Value[:12]
		}
	}
	return v
}
