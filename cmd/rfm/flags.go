package main

import (
	"io"

	"github.com/rfmkit/rfm/describe"
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

// The names the commands (some of which are others' to edit) use for
// the command line machinery of package cli and the reports of package
// describe.
type (
	listFlag = cli.List
	progress = cli.Progress
	fitData  = describe.FitData
)

var (
	newProgress    = cli.NewProgress
	seconds        = cli.Seconds
	readTable      = cli.ReadTable
	readRows       = cli.ReadRows
	fitEncoding    = cli.FitEncoding
	encodeRows     = cli.EncodeRows
	checkOutPath   = cli.CheckOutPath
	describeTarget = describe.Target
	describeConfig = describe.Config
	describeBest   = describe.Best
	writeHistory   = describe.WriteHistory
	joinLimited    = describe.JoinLimited
	paramUsage     = cli.ParamUsage
	finite         = describe.Finite
	roundLabel     = describe.RoundLabel
	writeJSON      = cli.WriteJSON
	unwrapPath     = cli.UnwrapPath
)

func usagef(format string, args ...any) error { return cli.Usagef(format, args...) }
