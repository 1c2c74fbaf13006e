package generator_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/tools/go/packages"

	"github.com/oncekit/once/generator"
)

// cpuTime is the user and system time used so far by this process and its waited-for
// children (the go command).
func cpuTime() time.Duration {
	var self, children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(children.Utime) + tv(children.Stime)
}

// syntheticModule writes a module of pkgs packages with perPkg guarded functions each,
// cycling through the kinds that need no pgx, and returns its directory.
func syntheticModule(b *testing.B, pkgs, perPkg int) string {
	b.Helper()
	dir := b.TempDir()
	write := func(name, content string) {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write("go.mod", "module example.com/bench\n\ngo 1.26.0\n")
	kinds := []string{
		"//once:forever key=u.ID,u.Org",
		"//once:open key=u.ID stale=5m",
		"//once:episode key=u.Org",
		"//once:statement key=u.Org cap=10 n=2",
		"//once:lease key=u.ID ttl=10s",
		"//once:provider key=u.ID prefix=mail",
		"//once:request key=u.ID",
	}
	for p := range pkgs {
		var src strings.Builder
		fmt.Fprintf(&src, "package p%d\n\nimport \"context\"\n\n// User is a user.\ntype User struct {\n\tID  int64\n\tOrg string\n}\n", p)
		for f := range perPkg {
			fmt.Fprintf(&src, "\n// F%d does one thing.\n//\n%s\nfunc F%d(ctx context.Context, u User) (string, error) { return u.Org, nil }\n", f, kinds[(p*perPkg+f)%len(kinds)], f)
		}
		write(fmt.Sprintf("p%d/p%d.go", p, p), src.String())
	}
	return dir
}

// BenchmarkGenerate_1000Directives measures oncegen (load, validate, type-check keys,
// render, plan and render the migrations) on a module with 1,000 directives in 20 packages, against a bare packages.Load of
// the same module with the same mode, in the same run: each iteration does both, in turn,
// so a busy machine slows both alike. It reports each one's milliseconds and their ratio
// (goal: at most 1.5).
func BenchmarkGenerate_1000Directives(b *testing.B) {
	dir := syntheticModule(b, 20, 50)
	migs := b.TempDir()
	mode := packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes |
		packages.NeedTypesInfo | packages.NeedModule
	var load, gen, genLoad, loadCPU, genCPU time.Duration
	for b.Loop() {
		cpu0 := cpuTime()
		start := time.Now()
		pkgs, err := packages.Load(&packages.Config{Mode: mode, Dir: dir}, "./...")
		if err != nil || len(pkgs) != 20 {
			b.Fatalf("load: %d packages, %v", len(pkgs), err)
		}
		load += time.Since(start)
		cpu1 := cpuTime()
		loadCPU += cpu1 - cpu0

		start = time.Now()
		gpkgs, err := generator.Load(generator.LoadConfig{Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		genLoad += time.Since(start)
		res, err := generator.Generate(gpkgs)
		if err != nil {
			b.Fatal(err)
		}
		// The migrations too: the runtime's schema steps, planned against an empty snapshot.
		objs, err := generator.Objects(res.Guards)
		if err != nil {
			b.Fatal(err)
		}
		plan, err := generator.Diff(generator.Snapshot{Version: 1}, res.Guards, objs, false)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := generator.MigrationFiles(migs, "goose", plan, generator.Options{}); err != nil {
			b.Fatal(err)
		}
		gen += time.Since(start)
		genCPU += cpuTime() - cpu1
		if len(res.Guards) != 1000 || len(res.Files) != 20 {
			b.Fatalf("%d guards in %d files", len(res.Guards), len(res.Files))
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(load.Milliseconds())/n, "load-ms/op")
	b.ReportMetric(float64(gen.Milliseconds())/n, "oncegen-ms/op")
	b.ReportMetric(float64(genLoad.Milliseconds())/n, "oncegen-load-ms/op")
	b.ReportMetric(float64(gen)/float64(load), "ratio")
	// CPU time (this process and the go commands it ran) does not depend on what else the
	// machine is doing, where wall time on a shared machine does.
	b.ReportMetric(float64(loadCPU.Milliseconds())/n, "load-cpu-ms/op")
	b.ReportMetric(float64(genCPU.Milliseconds())/n, "oncegen-cpu-ms/op")
	b.ReportMetric(float64(genCPU)/float64(loadCPU), "cpu-ratio")
}
