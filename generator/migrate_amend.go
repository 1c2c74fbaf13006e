package generator

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
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
		name := regexp.MustCompile(`^[0-9]+_once_schema_` + regexp.QuoteMeta(number+"_"+a.Name) + `(\.up)?\.sql$`)
		var found []string
		for _, e := range entries {
			if !e.IsDir() && name.MatchString(e.Name()) {
				found = append(found, e.Name())
			}
		}
		sort.Strings(found)
		for _, f := range found {
			path := filepath.Join(dir, f)
			b, err := os.ReadFile(path)
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", path, err)
			}
			text := string(b)
			switch n := strings.Count(text, a.Old); {
			case n == 1:
				files[f] = []byte(strings.Replace(text, a.Old, a.New, 1))
			case strings.Contains(text, a.New):
				// mended already
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
