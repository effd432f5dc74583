package main

import (
	_ "embed"
	"strings"
)

// helpText holds every command's description and examples, kept as text
// beside USAGE.md rather than as Go strings.
//
//go:embed help.txt
var helpText string

// commandHelp is one command's section of help.txt.
type commandHelp struct{ about, example string }

// helpSections parses help.txt: "== NAME" starts a command's section, a
// line "-- examples" starts its examples, lines starting "#" before the
// first section are comments.
func helpSections(text string) map[string]commandHelp {
	sections := map[string]commandHelp{}
	var name string
	var about, example []string
	inExample := false
	flush := func() {
		if name != "" {
			sections[name] = commandHelp{
				about:   strings.TrimSpace(strings.Join(about, "\n")),
				example: strings.TrimSpace(strings.Join(example, "\n")),
			}
		}
	}
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "== "):
			flush()
			name, about, example, inExample = strings.TrimPrefix(line, "== "), nil, nil, false
		case name == "":
			// the header comment
		case line == "-- examples":
			inExample = true
		case inExample:
			example = append(example, line)
		default:
			about = append(about, line)
		}
	}
	flush()
	return sections
}

var commandHelps = helpSections(helpText)

// helpFlagSet is newFlagSet with the command's description and examples
// taken from help.txt. A command without a section is a programming error
// that every command's -h test catches.
func helpFlagSet(name, synopsis string) *flagSet {
	h, ok := commandHelps[name]
	if !ok {
		panic("help.txt has no section for " + name)
	}
	return newFlagSet(name, synopsis, h.about, h.example)
}
