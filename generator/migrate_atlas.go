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
// Atlas does: one running SHA-256 over each file's name and bytes, in file-name order,
// recorded after each file, and the final sum on the first line.
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
	h := sha256.New()
	var lines bytes.Buffer
	for _, n := range names {
		h.Write([]byte(n))
		h.Write(all[n])
		fmt.Fprintf(&lines, "%s h1:%s\n", n, base64.StdEncoding.EncodeToString(h.Sum(nil)))
	}
	return []byte(fmt.Sprintf("h1:%s\n%s", base64.StdEncoding.EncodeToString(h.Sum(nil)), lines.Bytes())), nil
}
