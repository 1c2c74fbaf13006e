package once001_test

import (
	"testing"

	"github.com/oncekit/once/analyzer/internal/model"
	"github.com/oncekit/once/analyzer/once001"
	"github.com/oncekit/once/internal/checktest"
)

func TestOnce001(t *testing.T) {
	t.Parallel()
	checktest.Run(t, "testdata", once001.Analyzer, "sms", "alerts", "checkout", "retries", "jobs", "declared", "oncall", "mailer", "ticker", "queue", "webhooks", "retrylib", "retriedcaller")
}

// An effect reached by several calls is one effect in a function's fact: facts stay the
// size of what a function reaches, not of the paths to it.
func TestFacts_OneEffectPerPath(t *testing.T) {
	t.Parallel()
	checktest.Run(t, "testdata", model.New(func() model.Config { return model.Config{} }), "fanout")
}
