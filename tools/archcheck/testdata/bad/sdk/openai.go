// Package openai stands in for the OpenAI SDK.
package openai

// Name is the SDK's name.
const Name = "openai"
