# The two commands of the README's quick start: `make demo` runs the main job, `make test`
# runs every test. .ci/run calls `make test`.

GO ?= go

# Packages whose tests fire goroutines at one key run under the race detector.
RACE_PKGS := ./runtime/... ./internal/pgtest/...

.PHONY: test lint unit race
test: lint unit race

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v /testdata/)); \
	  if [ -n "$$out" ]; then echo "not gofmt'ed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

unit:
	@pkgs=$$($(GO) list ./... | grep -v -e /runtime -e /internal/pgtest); \
	  if [ -n "$$pkgs" ]; then echo "$(GO) test -count=1 <other packages>"; $(GO) test -count=1 $$pkgs; fi

race:
	$(GO) test -count=1 -race $(RACE_PKGS)
