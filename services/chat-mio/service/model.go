package service

import (
	"errors"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
)

func (c *Config) validateModel() error { return nil }

func buildModel(Config) (llm.Client, error) {
	return nil, errors.New("agents.chat: no model adapter")
}
