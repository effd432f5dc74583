package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strconv"

	"github.com/rfmkit/rfm/internal/linalg"
	"github.com/rfmkit/rfm/uci"
)

func cmdBench(e *env, args []string) error {
	usage := func(w io.Writer) {
		io.WriteString(w, `Usage: rfm bench SUITE [flags]

Suites:
  uci   the UCI-121 protocol of the RFM papers and the comparison with 179
        classifiers (run 'rfm bench uci -h' for its flags)

Example:
  rfm bench uci --data ../shared/data/uci121 --out results/
`)
	}
	if len(args) == 0 {
		usage(e.stderr)
		return usagef("name a suite: uci")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(e.stdout)
		return nil
	case "uci":
		if code := uci.Command(args[1:], e.stdout, e.stderr); code != 0 {
			return exitCode(code) // uci has printed its own message
		}
		return nil
	}
	return usagef("unknown benchmark suite %q; the suites are: uci", args[0])
}

// exitCode is an error whose message was already printed by a mounted
// command; it only carries the exit status.
type exitCode int

func (c exitCode) Error() string { return "exit status " + strconv.Itoa(int(c)) }

func cmdVersion(e *env, args []string) error {
	f := newFlagSet("version", "rfm version", "Print the version of rfm, the Go version it was built with and the linear-algebra backend.", "rfm version")
	pos, err := f.Parse(args, e.stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
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
