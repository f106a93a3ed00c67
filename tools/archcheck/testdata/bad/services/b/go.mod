module github.com/picoclaw-suite/picoclaw/services/b

go 1.26.0

require (
	github.com/picoclaw-suite/picoclaw/pkg v0.0.0
	github.com/picoclaw-suite/picoclaw/services/a v0.0.0
)

replace (
	github.com/picoclaw-suite/picoclaw/pkg => ../../pkg
	github.com/picoclaw-suite/picoclaw/services/a => ../a
)
