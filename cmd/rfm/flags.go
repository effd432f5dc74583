package main

import (
	"io"

	"github.com/rfmkit/rfm/internal/cli"
)

// flagSet is a cli.FlagSet; positional, when non-empty, names the one
// flag whose value may be given as a bare argument (ParsePositional).
type flagSet struct {
	*cli.FlagSet
	positional string
}

func newFlagSet(name, synopsis, about, example string) *flagSet {
	return &flagSet{FlagSet: cli.NewFlagSet(name, synopsis, about, example)}
}

// ParsePositional parses args, the value of --positional also as a bare
// argument.
func (f *flagSet) ParsePositional(args []string, w io.Writer, target *string) error {
	f.FlagSet.Positional = f.positional
	return f.FlagSet.ParsePositional(args, w, target)
}

// The command line machinery of package cli, under the names the commands
// use.
type (
	listFlag = cli.List
	progress = cli.Progress
)

var (
	newProgress = cli.NewProgress
	seconds     = cli.Seconds
)

func usagef(format string, args ...any) error { return cli.Usagef(format, args...) }
