package generator

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// atlasSumFile is Atlas's integrity file: it refuses a migration directory whose files do
// not match it.
const atlasSumFile = "atlas.sum"

// atlasSum computes atlas.sum over the .sql files already in dir and the new ones, the way
// Atlas does: a running SHA-256 over each file's name and bytes, in file-name order, recorded
// after each file; and on the first line a SHA-256 over those names and recorded sums.
func atlasSum(dir string, newFiles map[string][]byte) ([]byte, error) {
	all := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("listing %s: %w", dir, err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", e.Name(), err)
		}
		all[e.Name()] = b
	}
	for name, b := range newFiles {
		if strings.HasSuffix(name, ".sql") {
			all[name] = b
		}
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	running, sum := sha256.New(), sha256.New()
	var lines bytes.Buffer
	for _, n := range names {
		running.Write([]byte(n))
		running.Write(all[n])
		h := base64.StdEncoding.EncodeToString(running.Sum(nil))
		fmt.Fprintf(&lines, "%s h1:%s\n", n, h)
		sum.Write([]byte(n))
		sum.Write([]byte(h))
	}
	return []byte(fmt.Sprintf("h1:%s\n%s", base64.StdEncoding.EncodeToString(sum.Sum(nil)), lines.Bytes())), nil
}
