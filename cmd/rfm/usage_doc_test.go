package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// USAGE.md documents every flag of every command: the flags each command's
// help prints must all appear there as `--name`, so the reference cannot
// fall behind the code unnoticed.
func TestUsageDocumentsEveryFlag(t *testing.T) {
	doc, err := os.ReadFile("USAGE.md")
	if err != nil {
		t.Fatal(err)
	}
	flagLine := regexp.MustCompile(`(?m)^\s+--?([a-z][a-z0-9-]*)`)
	// Every command of the list "rfm help" shows (a new command is checked
	// without editing this test), and bench's subcommands.
	var cmds [][]string
	for _, c := range commands {
		switch c.name {
		case "help", "version", "bench":
			continue
		}
		cmds = append(cmds, []string{c.name})
	}
	cmds = append(cmds, []string{"bench", "uci"}, []string{"bench", "scale"}, []string{"bench", "serve"}, []string{"bench", "tabular"}, []string{"bench", "inpaint"})
	dir := t.TempDir()
	for _, cmd := range cmds {
		r := rfmCmd(t, dir, append(cmd, "-h")...)
		help := r.stdout + r.stderr
		found := flagLine.FindAllStringSubmatch(help, -1)
		if len(found) < 2 {
			t.Fatalf("rfm %s -h lists %d flags; the pattern no longer matches its help:\n%s", strings.Join(cmd, " "), len(found), help)
		}
		for _, m := range found {
			if m[1] == "h" || m[1] == "help" {
				continue
			}
			if !strings.Contains(string(doc), "`--"+m[1]) {
				t.Errorf("rfm %s: flag --%s is not documented in USAGE.md", strings.Join(cmd, " "), m[1])
			}
		}
	}
}
