module github.com/picoclaw-suite/picoclaw/cmd/picoclaw

go 1.26.0

replace (
	github.com/picoclaw-suite/picoclaw/gen => ../../gen
	github.com/picoclaw-suite/picoclaw/pkg => ../../pkg
)
