package crashtest_test

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/oncekit/once/runtime/internal/crashtest"
)

func TestStart_ChildIsReadyThenKilled(t *testing.T) {
	if crashtest.IsChild(t) {
		crashtest.Ready("pid " + strconv.Itoa(os.Getpid()) + "\nsecond line")
	}
	t.Parallel()
	child, err := crashtest.Start(t, map[string]string{"CRASHTEST_SAMPLE": "x"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "pid " + strconv.Itoa(child.Pid()) + " second line"; child.Payload != want {
		t.Fatalf("payload %q, want %q", child.Payload, want)
	}
	if err := syscall.Kill(child.Pid(), 0); err != nil {
		t.Fatalf("child not running before Kill: %v", err)
	}
	if err := child.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(child.Pid(), 0); err != syscall.ESRCH {
		t.Fatalf("child still exists after Kill (signal 0: %v)", err)
	}
	if err := child.Kill(); err != nil {
		t.Fatalf("second Kill: %v", err)
	}
}

func TestStart_ChildSeesTheEnvironment(t *testing.T) {
	if crashtest.IsChild(t) {
		crashtest.Ready(os.Getenv("CRASHTEST_SAMPLE"))
	}
	t.Parallel()
	child, err := crashtest.Start(t, map[string]string{"CRASHTEST_SAMPLE": "dsn=here"})
	if err != nil {
		t.Fatal(err)
	}
	defer child.Kill()
	if child.Payload != "dsn=here" {
		t.Fatalf("payload %q, want the environment value", child.Payload)
	}
}

// A child that fails before Ready must make Start fail with the child's own words, not
// hang until the timeout.
func TestStart_ReportsAChildThatDiesBeforeReady(t *testing.T) {
	if crashtest.IsChild(t) {
		t.Fatal("the child cannot reach its database")
	}
	t.Parallel()
	_, err := crashtest.Start(t, nil)
	if err == nil {
		t.Fatal("Start succeeded for a child that failed before Ready")
	}
	if !strings.Contains(err.Error(), "the child cannot reach its database") {
		t.Fatalf("error does not carry the child's output: %v", err)
	}
}

func TestStart_RunsOnlyTheNamedSubtest(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"a", "a.b"} {
		t.Run(name, func(t *testing.T) {
			if crashtest.IsChild(t) {
				crashtest.Ready(t.Name())
			}
			child, err := crashtest.Start(t, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer child.Kill()
			if child.Payload != t.Name() {
				t.Fatalf("child ran %q, want %q", child.Payload, t.Name())
			}
		})
	}
}
