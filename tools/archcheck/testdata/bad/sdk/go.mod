module github.com/openai/openai-go/v3

go 1.26.0
