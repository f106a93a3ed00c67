module github.com/picoclaw-suite/picoclaw/pkg

go 1.26.0

require (
	example.com/drift v1.0.0
	github.com/openai/openai-go/v3 v3.0.0
)
