package main

import (
	"strings"
	"testing"
)

// Every section of help.txt belongs to a command or bench suite, and every
// command's -h prints its section's description and examples.
func TestHelpSections(t *testing.T) {
	names := map[string]bool{}
	for _, c := range commands {
		names[c.name] = true
	}
	for s := range benchSuites {
		names["bench "+s] = true
	}
	for name, h := range commandHelps {
		if !names[name] {
			t.Errorf("help.txt section %q names no command", name)
		}
		if h.about == "" || h.example == "" {
			t.Errorf("help.txt section %q: description or examples empty", name)
		}
		var out strings.Builder
		e := &env{stdout: &out, stderr: &out, tty: func() bool { return false }}
		args := append(strings.Fields(name), "-h")
		c := lookup(args[0])
		if code := e.exit(name, c.run(e, args[1:])); code != exitOK {
			t.Errorf("rfm %s -h: exit %d", name, code)
		}
		first := strings.SplitN(h.about, "\n", 2)[0]
		if !strings.Contains(out.String(), first) || !strings.Contains(out.String(), strings.SplitN(h.example, "\n", 2)[0]) {
			t.Errorf("rfm %s -h does not print its help.txt section:\n%s", name, out.String())
		}
	}
}

func TestHelpSectionsParse(t *testing.T) {
	got := helpSections("# comment\n== a b\nline 1\nline 2\n-- examples\nrfm a b\n\n== c\nx\n-- examples\ny\n")
	if len(got) != 2 || got["a b"].about != "line 1\nline 2" || got["a b"].example != "rfm a b" || got["c"].about != "x" || got["c"].example != "y" {
		t.Fatalf("helpSections = %#v", got)
	}
}
