#!/usr/bin/env bash
# make test: every module's tests with -race, then the serveronly build's own tests, then one
# summary line (passed, failed, skipped and why). Postgres and Redis are found on their default
# local ports when the PICOCLAW_TEST_* variables are not set; under CI (CI=true) and whenever
# integration is required (PICOCLAW_REQUIRE_INTEGRATION=1, which .ci/run sets) a skipped test
# fails the run.
set -uo pipefail
cd "$(dirname "$0")/.."

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
if [ -z "${PICOCLAW_TEST_POSTGRES_DSN:-}" ] && listening 5432; then
	export PICOCLAW_TEST_POSTGRES_DSN="postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	echo "make test: Postgres found on 127.0.0.1:5432 (PICOCLAW_TEST_POSTGRES_DSN=$PICOCLAW_TEST_POSTGRES_DSN)"
fi
if [ -z "${PICOCLAW_TEST_REDIS_ADDR:-}" ] && listening 6379; then
	export PICOCLAW_TEST_REDIS_ADDR="127.0.0.1:6379"
	echo "make test: Redis found on 127.0.0.1:6379 (PICOCLAW_TEST_REDIS_ADDR=$PICOCLAW_TEST_REDIS_ADDR)"
fi

flags=()
if [ "${CI:-}" = "true" ] || [ "${PICOCLAW_REQUIRE_INTEGRATION:-}" = "1" ]; then
	flags+=(-no-skips)
fi
# SERVERONLY_TESTS (set by make test): packages whose TestServerOnly* tests, in files tagged
# serveronly, run a second time in a build with -tags serveronly (no SQLite linked).
read -r -a serveronly <<<"${SERVERONLY_TESTS:-}"
go build -o .tmp/bin/testsum ./tools/testsum/cmd/testsum || exit 2
{
	go test -race -count=1 -timeout 15m -json "$@"
	if [ ${#serveronly[@]} -gt 0 ]; then
		go test -race -count=1 -timeout 15m -json -tags serveronly -run '^TestServerOnly' "${serveronly[@]}"
	fi
} 2>&1 | .tmp/bin/testsum "${flags[@]}"
