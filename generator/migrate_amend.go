package generator

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// runtimeStepFile matches the name of a file holding a runtime schema step, as oncegen names
// it: its version, once_schema_, the step's number and name.
var runtimeStepFile = regexp.MustCompile(`^[0-9]+_once_schema_[0-9]{4}_[a-z0-9_]+(\.up)?\.sql$`)

// amendedFiles returns the migration files in dir that hold an amended runtime step, each
// with the step's old statements replaced by its new ones. A file is found by the name
// oncegen gave it (NNNN_once_schema_<step>_<name>, the up file in every format) and changed
// only where it holds the old statements exactly once: every other line, the timeouts and
// the tool's annotations included, stays as it is, so a file written in any format with any
// flags is mended alike. A file that already holds the new statements is up to date. A
// step with no file (migrations squashed or rewritten since) has nothing to mend; a file
// that holds neither text was edited by hand, and is an error naming it, for a human to
// mend.
func amendedFiles(dir string, amended []Amendment) (map[string][]byte, error) {
	files := map[string][]byte{}
	if len(amended) == 0 {
		return files, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("listing %s: %w", dir, err)
	}
	for _, a := range amended {
		number := strings.TrimPrefix(a.ID, "runtime:step:")
		step := "_once_schema_" + number + "_" + a.Name + "."
		for _, e := range entries { // sorted by name
			f := e.Name()
			if e.IsDir() || !runtimeStepFile.MatchString(f) || !strings.Contains(f, step) {
				continue
			}
			path := filepath.Join(dir, f)
			b, err := os.ReadFile(path)
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", path, err)
			}
			text := string(b)
			switch n := strings.Count(text, a.Old); {
			case mended(text, a):
				// mended already (by a run whose snapshot was not written, or by hand)
			case n == 1:
				files[f] = []byte(strings.Replace(text, a.Old, a.New, 1))
			default:
				return nil, fmt.Errorf("%s: once's schema step %s (%s) has been amended since oncegen wrote this file, "+
					"and the file no longer holds the statements oncegen wrote (found %d times), so it cannot be mended "+
					"here: replace the step's statements in it with those of runtime/schema/%s_%s.up.sql in the once "+
					"module, or put back the text oncegen wrote and run it again", path, number, a.Name, n, number, a.Name)
			}
		}
	}
	return files, nil
}

// mended reports whether text, a step's file, holds the amended statements already. The new
// statements may hold the old ones (a mend that only adds), so the file must hold the new
// ones once and the old ones nowhere else. Line ends and trailing blanks are not compared,
// so a file mended by hand in an editor that wrote CRLF, or trimmed lines, counts.
func mended(text string, a Amendment) bool {
	text, old, cur := plain(text), plain(a.Old), plain(a.New)
	if strings.Count(text, cur) != 1 {
		return false
	}
	return strings.Count(text, old) == strings.Count(cur, old)
}

// plain is s with CRLF line ends as LF and each line's trailing blanks removed.
func plain(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(lines, "\n")
}
