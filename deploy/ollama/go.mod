module github.com/picoclaw-suite/picoclaw/deploy/ollama

go 1.26.0
