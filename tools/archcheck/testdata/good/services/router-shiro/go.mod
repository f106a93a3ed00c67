module github.com/picoclaw-suite/picoclaw/services/router-shiro

go 1.26.0

require github.com/picoclaw-suite/picoclaw/pkg v0.0.0

replace github.com/picoclaw-suite/picoclaw/pkg => ../../pkg
