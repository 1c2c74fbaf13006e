package main

import (
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/oncekit/once/analyzer/catalog"
)

// printVetID answers go vet's -V=full question. go vet keys each package's cached result by
// this ID, the flags and the package's inputs; Go 1.26's cmd/go leaves out whether the
// package was vetted for its own findings or only for the facts its importers need, so a
// cached facts-only run of b (made while vetting a) later answers "go vet ./b" with nothing,
// and a cached run of b for its findings is printed again while vetting a. The ID therefore
// names the go command that asked: the executable's hash, that command's arguments and its
// directory. One command always vets the same packages for their findings, so repeating it
// reuses the cache and still prints the same findings; another command never sees its
// entries. The module root's oncelint.json, which go vet does not know is an input, is part
// of the ID too. Where the command cannot be read, the ID is new for every run and nothing
// is reused.
func printVetID(w io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("oncelint -V=full: %w", err)
	}
	f, err := os.Open(exe)
	if err != nil {
		return fmt.Errorf("oncelint -V=full: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("oncelint -V=full: reading %s: %w", exe, err)
	}
	exeID := fmt.Sprintf("%x", h.Sum(nil))

	run := sha256.New()
	io.WriteString(run, exeID)
	if cmdline, dir, ok := invoker(); ok {
		fmt.Fprintf(run, "\x00%q\x00%q", cmdline, dir)
		// The project's catalogue is an input go vet does not know of: a change of it
		// must not reuse results computed with the old one.
		if root := catalog.ModuleRoot(dir); root != "" {
			if data, err := os.ReadFile(filepath.Join(root, "oncelint.json")); err == nil {
				run.Write(data)
			}
		}
	} else {
		nonce := make([]byte, 16)
		rand.Read(nonce)
		run.Write(nonce)
	}
	// cmd/go reads a devel version's ID as the part of buildID after its last slash.
	_, err = fmt.Fprintf(w, "oncelint version devel buildID=%s/%x\n", exeID, run.Sum(nil))
	return err
}

// invoker returns the command line and working directory of the process that started this
// one (the go command, when go vet asks for the ID).
func invoker() (cmdline []byte, dir string, ok bool) {
	proc := "/proc/" + strconv.Itoa(os.Getppid())
	cmdline, err := os.ReadFile(proc + "/cmdline")
	if err != nil || len(cmdline) == 0 {
		return nil, "", false
	}
	dir, err = os.Readlink(proc + "/cwd")
	if err != nil {
		return nil, "", false
	}
	return cmdline, dir, true
}
