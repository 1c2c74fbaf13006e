package once001_test

import (
	"testing"

	"github.com/oncekit/once/analyzer/once001"
	"github.com/oncekit/once/internal/checktest"
)

func TestOnce001(t *testing.T) {
	t.Parallel()
	checktest.Run(t, "testdata", once001.Analyzer, "sms", "alerts", "checkout", "retries", "jobs", "declared", "oncall", "mailer", "ticker", "queue")
}
