module github.com/picoclaw-suite/picoclaw/tools

go 1.26.0
