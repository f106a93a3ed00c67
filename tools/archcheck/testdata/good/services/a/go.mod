module github.com/picoclaw-suite/picoclaw/services/a

go 1.26.0

require (
	example.com/drift v1.0.0
	github.com/picoclaw-suite/picoclaw/pkg v0.0.0
)

replace github.com/picoclaw-suite/picoclaw/pkg => ../../pkg
