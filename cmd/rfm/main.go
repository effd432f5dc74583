// Command rfm trains, evaluates and applies Recursive Feature Machines on
// tables: CSV/TSV, Parquet, NPY/NPZ and LIBSVM files.
//
//	rfm fit --data train.csv --target churn --out churn.rfm
//	rfm predict --model churn.rfm --data new.csv --out predictions.csv
//	rfm eval --model churn.rfm --data test.csv
//
// Run "rfm help" for the subcommands and "rfm help CMD" for their flags;
// USAGE.md in this directory is the reference. The command only wires the
// library's packages together: reading and encoding tables is package
// dataset's job, fitting package rfm's, scoring package metrics's.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/rfmkit/rfm/internal/cli"
	"golang.org/x/term"
)

// version is set at link time (-ldflags "-X main.version=v1.0.0"); otherwise
// the module version from the build information is used.
var version = ""

// Exit codes.
const (
	exitOK        = 0
	exitError     = 1   // the command ran and failed: bad data, unreadable file, ...
	exitUsage     = 2   // the command line itself is wrong
	exitInterrupt = 130 // Ctrl-C or SIGTERM
)

// env is what a subcommand may touch: its output streams, a context that is
// cancelled on interrupt, and how to tell whether stderr is a terminal.
type env struct {
	ctx    context.Context
	stdout io.Writer
	stderr io.Writer
	// tty reports whether progress bars may be drawn on stderr.
	tty func() bool
}

// command is one subcommand.
type command struct {
	name    string
	summary string // one line for "rfm help"
	run     func(e *env, args []string) error
}

// commands lists the subcommands in the order "rfm help" shows them. It is
// filled in init to break the cycle help → commands → help.
var commands []*command

func init() {
	commands = []*command{
		{"fit", "train a model on a table and save it", cmdFit},
		{"predict", "predict rows of a table with a saved model", cmdPredict},
		{"eval", "score a saved model on a table that has the target column", cmdEval},
		{"cv", "k-fold cross-validation of a configuration", cmdCV},
		{"export", "export a saved model to ONNX for other languages and runtimes", cmdExport},
		{"serve", "serve a saved model over HTTP (JSON or CSV rows in, predictions out)", cmdServe},
		{"tune", "search the hyperparameters within a time budget and save the best model", cmdTune},
		{"inspect", "show a model's settings, rounds and learned features", cmdInspect},
		{"nfa", "train a network and measure the Neural Feature Ansatz layer by layer", cmdNFA},
		{"phenomena", "reproduce grokking-like and simplicity-bias behaviour with a network and an RFM", cmdPhenomena},
		{"memory", "store examples as attractors or sequences as limit cycles of a network, and verify them", cmdMemory},
		{"hyperbf", "train a HyperBF network with a learned metric and compare it with the AGOP", cmdHyperBF},
		{"complete", "complete a matrix with missing cells with the NTK of an infinitely wide network", cmdComplete},
		{"inpaint", "inpaint an image with the exact CNTK of an encoder-decoder network (thesis ch. 3)", cmdInpaint},
		{"synth", "write a synthetic regression task to CSV", cmdSynth},
		{"deep-limit", "the infinitely deep NTK: dual activations, taxonomy, consistency (thesis ch. 4)", cmdDeepLimit},
		{"bench", "benchmarks: 'rfm bench uci' runs the UCI-121 protocol", cmdBench},
		{"version", "print the version, Go version and linear-algebra backend", cmdVersion},
		{"help", "show help for rfm or a subcommand", cmdHelp},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, func() bool {
		return term.IsTerminal(int(os.Stderr.Fd()))
	})
	stop()
	os.Exit(code)
}

// run executes one command line and returns the exit code. It never panics:
// a bug surfaces as a one-line internal error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, tty func() bool) (code int) {
	e := &env{ctx: ctx, stdout: stdout, stderr: stderr, tty: tty}
	if len(args) == 0 {
		writeMainUsage(stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		writeMainUsage(stdout)
		return exitOK
	case "-v", "-version", "--version":
		name = "version"
	}
	cmd := lookup(name)
	if cmd == nil {
		msg := fmt.Sprintf("unknown command %q", name)
		if s := suggest(name); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		fmt.Fprintf(stderr, "rfm: %s (run 'rfm help' for the list)\n", msg)
		return exitUsage
	}
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "rfm %s: internal error: %s; please report this with the command line\n", cmd.name, oneLine(fmt.Sprint(r)))
			if os.Getenv("RFM_DEBUG") != "" {
				os.Stderr.Write(debug.Stack())
			}
			code = exitError
		}
	}()
	return e.exit(cmd.name, cmd.run(e, args[1:]))
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// exit prints err as one line and maps it to an exit code.
func (e *env) exit(cmd string, err error) int {
	var ue *cli.UsageError
	var ec exitCode
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &ec):
		return int(ec)
	case errors.As(err, &ue):
		fmt.Fprintf(e.stderr, "rfm %s: %s (see 'rfm %s -h')\n", cmd, oneLine(ue.Msg), cmd)
		return exitUsage
	case errors.As(err, new(*interrupted)) && e.ctx.Err() != nil:
		fmt.Fprintf(e.stderr, "rfm %s: interrupted; %s\n", cmd, err)
		return exitInterrupt
	case errors.Is(err, context.Canceled) && e.ctx.Err() != nil:
		fmt.Fprintf(e.stderr, "rfm %s: interrupted; nothing was written\n", cmd)
		return exitInterrupt
	}
	fmt.Fprintf(e.stderr, "rfm %s: %s\n", cmd, oneLine(err.Error()))
	return exitError
}

// interrupted is a command's own account of what an interrupt left behind
// (when that is not "nothing").
type interrupted struct{ msg string }

func (e *interrupted) Error() string { return e.msg }

// oneLine folds a message onto one line so every error is a single line of
// stderr, whatever produced it.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\n", "; ")
}

// suggest returns the command closest to a mistyped name, if any is close.
func suggest(name string) string {
	best, bestD := "", 3
	for _, c := range commands {
		if d := cli.EditDistance(name, c.name); d < bestD {
			best, bestD = c.name, d
		}
	}
	return best
}

func writeMainUsage(w io.Writer) {
	var b strings.Builder
	b.WriteString("rfm trains and applies Recursive Feature Machines: kernel machines that learn their features.\n\n")
	b.WriteString("Usage: rfm COMMAND [flags]\n\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-8s %s\n", c.name, c.summary)
	}
	b.WriteString(`
Five-minute tour:
  rfm fit --data train.csv --target churn --out churn.rfm
  rfm eval --model churn.rfm --data test.csv
  rfm predict --model churn.rfm --data new.csv --keep id --out predictions.csv
  rfm inspect --model churn.rfm

Run 'rfm help COMMAND' or 'rfm COMMAND -h' for a command's flags.
`)
	io.WriteString(w, b.String())
}

func cmdHelp(e *env, args []string) error {
	switch len(args) {
	case 0:
		writeMainUsage(e.stdout)
		return nil
	case 1:
		if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
			writeMainUsage(e.stdout)
			return nil
		}
		c := lookup(args[0])
		if c == nil {
			msg := fmt.Sprintf("unknown command %q", args[0])
			if s := suggest(args[0]); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			}
			return usagef("%s", msg)
		}
		// Every command prints its usage for -h and returns flag.ErrHelp.
		return c.run(e, []string{"-h"})
	}
	return usagef("help takes at most one command name, got %d arguments", len(args))
}
