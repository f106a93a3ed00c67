module github.com/picoclaw-suite/picoclaw/config

go 1.26.0
