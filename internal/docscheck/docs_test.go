package docscheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const root = "../.."

// TestReadme_AtMost200Lines keeps the README to what a new user reads before adopting.
func TestReadme_AtMost200Lines(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 200 {
		t.Errorf("README.md has %d lines, want at most 200: move reference to docs/", n)
	}
}

// link is a Markdown inline link's target.
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocs_RelativeLinksResolve checks every relative link of the top-level Markdown files
// and docs/ reaches a file or directory of the repository.
func TestDocs_RelativeLinksResolve(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(root, "*.md"))
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			checked++
			if _, err := os.Stat(filepath.Join(filepath.Dir(f), target)); err != nil {
				rel, _ := filepath.Rel(root, f)
				t.Errorf("%s: link %s reaches no file", rel, m[1])
			}
		}
	}
	if checked < 10 {
		t.Errorf("checked %d links; the Markdown files were not found or hold none", checked)
	}
}
