# PicoClaw Suite — `make help` lists the targets.
SHELL := bash
.DEFAULT_GOAL := help

TOOLS_BIN := $(CURDIR)/.tmp/bin
BUF_VERSION := v1.75.0
PROTOC_GEN_GO_VERSION := v1.36.12
PROTOC_GEN_CONNECT_GO_VERSION := v1.21.1
# Deployment tools: images without a Docker engine, Kubernetes manifests checked offline.
KO_VERSION := v0.18.1
CRANE_VERSION := v0.22.1
KUSTOMIZE_VERSION := v5.8.1
KUBECONFORM_VERSION := v0.7.0
# Monitoring: the alert rules checked and unit-tested by Prometheus's promtool (v3.x is module v0.3xx).
PROMTOOL_VERSION := v0.316.0

# Every module of the workspace (see go.work).
MODULES := gen config deploy/ollama pkg $(wildcard services/*) $(wildcard e2e) $(wildcard cmd/picoclaw) $(wildcard bench) tools
PKGS := $(addsuffix /...,$(addprefix ./,$(MODULES)))
SERVICES := $(notdir $(wildcard services/*))

.PHONY: help
help: ## Show this help
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-15s %s\n", $$1, $$2}'

$(TOOLS_BIN)/buf:
	GOBIN=$(TOOLS_BIN) go install github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
$(TOOLS_BIN)/protoc-gen-go:
	GOBIN=$(TOOLS_BIN) go install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
$(TOOLS_BIN)/protoc-gen-connect-go:
	GOBIN=$(TOOLS_BIN) go install connectrpc.com/connect/cmd/protoc-gen-connect-go@$(PROTOC_GEN_CONNECT_GO_VERSION)
$(TOOLS_BIN)/ko:
	GOBIN=$(TOOLS_BIN) go install github.com/google/ko@$(KO_VERSION)
$(TOOLS_BIN)/crane:
	GOBIN=$(TOOLS_BIN) go install github.com/google/go-containerregistry/cmd/crane@$(CRANE_VERSION)
$(TOOLS_BIN)/kustomize:
	GOBIN=$(TOOLS_BIN) go install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)
$(TOOLS_BIN)/kubeconform:
	GOBIN=$(TOOLS_BIN) go install github.com/yannh/kubeconform/cmd/kubeconform@$(KUBECONFORM_VERSION)
$(TOOLS_BIN)/promtool:
	GOBIN=$(TOOLS_BIN) go install github.com/prometheus/prometheus/cmd/promtool@$(PROMTOOL_VERSION)

# npm packages the tests check the suite against (the MCP Chrome bridge's published tool schemas,
# the reference MCP server): pinned in tools/npm/package.json and its lock file, installed into
# .tmp/npm (where pkg/testinfra/npmtools finds them). Reinstalled when the pins change.
NPM_TOOLS := $(CURDIR)/.tmp/npm
$(NPM_TOOLS)/node_modules/.package-lock.json: tools/npm/package.json tools/npm/package-lock.json
	rm -rf $(NPM_TOOLS) && mkdir -p $(NPM_TOOLS)
	cp tools/npm/package.json tools/npm/package-lock.json $(NPM_TOOLS)/
	cd $(NPM_TOOLS) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=warn

.PHONY: npm-tools
npm-tools: $(NPM_TOOLS)/node_modules/.package-lock.json ## Install the pinned npm packages the MCP tests need (tools/npm) under .tmp/npm

.PHONY: tools
tools: $(TOOLS_BIN)/buf $(TOOLS_BIN)/protoc-gen-go $(TOOLS_BIN)/protoc-gen-connect-go $(TOOLS_BIN)/ko $(TOOLS_BIN)/crane $(TOOLS_BIN)/kustomize $(TOOLS_BIN)/kubeconform $(TOOLS_BIN)/promtool ## Install pinned tools under .tmp/bin

.PHONY: generate
generate: tools ## Generate Go code from proto/ into gen/
	$(TOOLS_BIN)/buf lint
	rm -rf gen/picoclaw
	$(TOOLS_BIN)/buf generate

.PHONY: checkgenerate
checkgenerate: generate ## Fail when gen/ is not what proto/ generates
	@if [ -n "$$(git status --porcelain -- gen)" ]; then \
		echo "gen/ is stale: run 'make generate' and commit the result"; git status --porcelain -- gen; exit 1; fi

# The service binaries as released (make build, the images) are built with -tags serveronly:
# Redis and Postgres only, no SQLite (the mirror of the embedded build's sqliteonly).
SERVER_TAGS := serveronly
# What a serveronly build compiles: the shared library and the services.
SERVER_PKGS := ./pkg/... $(foreach s,$(SERVICES),./services/$(s)/...)
# The packages with tests of the serveronly build (TestServerOnly*, in files tagged serveronly):
# make test runs those tests again with the tag (the packages' other tests run in the default
# build, many of them on SQLite).
SERVERONLY_TESTS = $(sort $(addprefix ./,$(dir $(shell git grep -l '^func TestServerOnly' -- '*_test.go'))))

.PHONY: lint
lint: tools ## gofmt, go vet (also with -tags serveronly), buf lint, and the import rules and module versions of ARCHITECTURE.md
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^gen/')); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi
	go vet $(PKGS)
	go vet -tags $(SERVER_TAGS) $(SERVER_PKGS)
	$(TOOLS_BIN)/buf lint
	go test -count=1 ./tools/archcheck
	go run ./tools/archcheck/cmd/archcheck

.PHONY: test
test: ## Run every module's tests with -race, then the serveronly build's own tests with -tags serveronly (Postgres and Redis found on their default ports); ends with a summary line
	@SERVERONLY_TESTS="$(SERVERONLY_TESTS)" bash tools/test.sh $(PKGS)

.PHONY: run
run: ## Start the whole suite in one process with a chat prompt (embedded default; data in data/)
	@mkdir -p bin
	CGO_ENABLED=0 go build -tags $(EMBEDDED_TAGS) -trimpath -ldflags "$(LDFLAGS)" -o bin/picoclaw ./cmd/picoclaw
	exec bin/picoclaw run --data data

# Release builds: stripped, without local paths, version and commit stamped (`<bin> --version`,
# /healthz).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
# The embedded build links only SQLite (no Redis client, no Postgres driver).
EMBEDDED_TAGS := sqliteonly
LDFLAGS := -s -w -X github.com/picoclaw-suite/picoclaw/pkg/buildinfo.version=$(VERSION) -X github.com/picoclaw-suite/picoclaw/pkg/buildinfo.commit=$(COMMIT)

.PHONY: build
build: ## Build every binary into bin/ (the eight services with -tags serveronly and the picoclaw CLI with -tags sqliteonly), stripped and version-stamped
	@mkdir -p bin
	CGO_ENABLED=0 go build -tags $(SERVER_TAGS) -trimpath -ldflags "$(LDFLAGS)" -o bin/ $(foreach s,$(SERVICES),./services/$(s)/cmd/$(s))
	CGO_ENABLED=0 go build -tags $(EMBEDDED_TAGS) -trimpath -ldflags "$(LDFLAGS)" -o bin/picoclaw ./cmd/picoclaw
	@ls -l bin/

.PHONY: bench-compare
bench-compare: ## Compare the embedded suite built at REF (A) with the working tree (B), interleaved A, B, B, A, A, B … (writes bench/results/compare.{json,md})
	@test -n "$(REF)" || { echo "usage: make bench-compare REF=<commit>"; exit 2; }
	go run ./bench/cmd/picoclaw-bench -compare $(REF) -out bench/results $(COMPARE_FLAGS)

.PHONY: bench-compare-services
bench-compare-services: ## Compare the separate services built at REF (A) with the working tree (B), a short whole run of each per round, interleaved (writes bench/results/compare-services.{json,md}; COMPARE_FLAGS)
	@test -n "$(REF)" || { echo "usage: make bench-compare-services REF=<commit>"; exit 2; }
	go run ./bench/cmd/picoclaw-bench -compare $(REF) -compare-services -compare-rounds 4 -chat 50 -slow-chat 0 -approvals 50 -out bench/results $(COMPARE_FLAGS)

.PHONY: bench-faults
bench-faults: ## Fault run: LINE traffic while every service is killed and Redis, Postgres and the LINE API are paused, with 1 and 2 replicas (writes bench/results/faults*.{json,md}; FAULTS_FLAGS)
	go run ./bench/cmd/picoclaw-bench -faults -out bench/results $(FAULTS_FLAGS)
	go run ./bench/cmd/picoclaw-bench -faults -replicas 2 -out bench/results $(FAULTS_FLAGS)

.PHONY: bench
bench: ## Run the Go benchmarks, then the load tool (writes bench/results/report.json and report.md)
	go test -run '^$$' -bench . -benchmem $(PKGS)
	go run ./bench/cmd/picoclaw-bench -out bench/results

.PHONY: eval
eval: ## Measure the coders on the eval tasks with every provider whose API key is set (writes bench/results/eval.{json,md}; EVAL_FLAGS for picoclaw-eval)
	go run ./bench/cmd/picoclaw-eval -out bench/results $(EVAL_FLAGS)

.PHONY: images
images: $(TOOLS_BIN)/ko $(TOOLS_BIN)/crane ## Build and check every service's image without a Docker engine (ko; needs mmdebstrap) into .tmp/images (OCI layout)
	KO=$(TOOLS_BIN)/ko CRANE=$(TOOLS_BIN)/crane VERSION=$(VERSION) COMMIT=$(COMMIT) bash deploy/images.sh .tmp/images

.PHONY: k8s-check
k8s-check: $(TOOLS_BIN)/kustomize $(TOOLS_BIN)/kubeconform ## Render deploy/k8s with throwaway secrets, validate it offline (kubeconform, vendored schemas) and run its tests
	go test -count=1 ./e2e/deploy
	rm -rf .tmp/k8s && mkdir -p .tmp/k8s && cp -r deploy/k8s .tmp/k8s/
	find .tmp/k8s -name '*.env' ! -name settings.env -delete
	go run ./cmd/picoclaw keys | bash .tmp/k8s/k8s/secrets.sh .tmp/k8s/k8s/overlays/production 2>/dev/null
	$(TOOLS_BIN)/kustomize build .tmp/k8s/k8s/base > .tmp/k8s/base.yaml
	$(TOOLS_BIN)/kustomize build .tmp/k8s/k8s/overlays/production > .tmp/k8s/production.yaml
	$(TOOLS_BIN)/kubeconform -strict -summary -schema-location 'deploy/k8s/schemas/{{.ResourceKind}}{{.KindSuffix}}.json' .tmp/k8s/base.yaml .tmp/k8s/production.yaml

.PHONY: monitoring-check
monitoring-check: $(TOOLS_BIN)/promtool ## Check the Prometheus alert rules with promtool (check and unit tests); e2e/deploy checks the Grafana dashboard
	$(TOOLS_BIN)/promtool check rules deploy/monitoring/alerts.yaml
	cd deploy/monitoring && $(TOOLS_BIN)/promtool test rules alerts_test.yaml

.PHONY: up
up: ## Start the docker compose stack (redis, postgres, jaeger, every service)
	@[ -f .env ] || { cp .env.example .env; echo "created .env from .env.example: put your secrets there"; }
	docker compose up -d --build

.PHONY: down
down: ## Stop the docker compose stack
	docker compose down
