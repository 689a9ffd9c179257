# The front door. Every target installs what it needs first.
SHELL := /bin/bash
export TZ := UTC
NPM_STAMP := node_modules/.package-lock.json
LEADS := node bin/leads.js

.PHONY: setup refresh generate serve test test-deploy typecheck clients bench clean help

help:
	@echo "make serve    install, build the default dataset if there is none, serve the API"
	@echo "make test     typecheck and run every test (no network, no prior build needed)"
	@echo "make refresh  weekly refresh: generate raw data if data/raw is empty, build and publish a release"
	@echo "              (FETCH=1: download from the publishers first with leads fetch)"
	@echo "make test-deploy  nginx + two API replicas + PostgreSQL under load (docs/deploy.md; ~90 s)"
	@echo "make bench    speed and memory benchmarks (prints a table, writes bench/results/*.json)"
	@echo "make clean    remove generated data (raw files, releases) and node_modules"

$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $(NPM_STAMP)

setup: $(NPM_STAMP)

# FETCH=1: download from the publishers first (leads fetch); a failed source (exit 1) keeps its
# previous files and the refresh's gates decide; a usage error (exit 2) stops. Without FETCH the
# refresh stays offline and generates data when data/raw is empty.
refresh: setup
ifeq ($(FETCH),1)
	@$(LEADS) fetch $(FETCH_ARGS); rc=$$?; if [ $$rc -gt 1 ]; then exit $$rc; fi
	$(LEADS) refresh $(ARGS)
else
	$(LEADS) refresh --generate-if-empty $(ARGS)
endif

generate: setup
	$(LEADS) generate $(ARGS)

serve: setup
	@if [ ! -e "$${DATA_DIR:-data}/current/manifest.json" ]; then $(LEADS) refresh --generate-if-empty; fi
	node --import tsx api/server.ts

# The clients' generated files (README "Clients"): the TypeScript SDK's types from the OpenAPI
# document (git-ignored, never written by hand) and the Postman collection.
clients: setup
	node --import tsx clients/typescript/scripts/generate-types.ts
	node --import tsx clients/postman/generate-collection.ts

typecheck: setup clients
	npx tsc --noEmit

# uvu prints its own totals; the last line restates them as "N passed, N failed" for CI.
# test/deploy/ (real nginx, replicas and PostgreSQL, ~90 s) runs in `make test-deploy`, not here.
test: setup typecheck
	@mkdir -p .tmp
	@set -o pipefail; start=$$(date +%s); node --import tsx node_modules/uvu/bin.js test '^(?!deploy/).*\.test\.ts$$' 2>&1 | tee .tmp/test.log; rc=$$?; \
	  clean=$$(sed 's/\x1b\[[0-9;]*m//g' .tmp/test.log); \
	  total=$$(echo "$$clean" | awk '/Total:/ {print $$2}' | tail -1); \
	  passed=$$(echo "$$clean" | awk '/Passed:/ {print $$2}' | tail -1); \
	  skipped=$$(echo "$$clean" | awk '/Skipped:/ {print $$2}' | tail -1); \
	  echo "make test: $$(( $$(date +%s) - start )) s"; \
	  echo "$${passed:-0} passed, $$(( $${total:-0} - $${passed:-0} )) failed, $${skipped:-0} skipped"; \
	  exit $$rc

# The deployment of docs/deploy.md: deploy/ units and nginx site checked, then the topology test.
test-deploy: setup
	@mkdir -p .tmp
	@set -o pipefail; start=$$(date +%s); node --import tsx node_modules/uvu/bin.js test '^deploy/.*\.test\.ts$$' 2>&1 | tee .tmp/test-deploy.log; rc=$$?; \
	  echo "make test-deploy: $$(( $$(date +%s) - start )) s"; exit $$rc

bench: setup
	node --import tsx bench/run.ts $(ARGS)

clean:
	rm -rf data/raw data/releases data/current data/.refresh.lock node_modules
