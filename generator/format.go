package generator

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"runtime"
)

// CacheEnv names the environment variable that turns the format cache off (=off).
const CacheEnv = "ONCEGEN_CACHE"

// gofmt formats generated source. Formatting is most of oncegen's own work and a pure
// function of its input, so results are kept in the user's cache directory (as linters
// do), keyed by a hash of the unformatted source and the Go release whose go/format made
// them: a run that generates what it generated before formats nothing. The cache is a
// convenience; any failure to use it falls back to formatting.
func gofmt(src []byte) ([]byte, error) {
	path := cachePath(src)
	if path != "" {
		if b, err := os.ReadFile(path); err == nil && IsGenerated(b) {
			return b, nil
		}
	}
	out, err := format.Source(src)
	if err != nil {
		return nil, fmt.Errorf("formatting generated code: %w\n%s", err, src)
	}
	if path != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
			writeFileAtomic(path, out) // best effort: a failed write only costs the next run time
		}
	}
	return out, nil
}

// cachePath is where the formatted form of src is kept, or "" without a cache.
func cachePath(src []byte) string {
	if os.Getenv(CacheEnv) == "off" {
		return ""
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "oncegen gofmt v1\x00%s\x00", runtime.Version())
	h.Write(src)
	sum := hex.EncodeToString(h.Sum(nil))
	return filepath.Join(dir, "oncegen", sum[:2], sum)
}
