// Package fakellm stands in for the model fakes.
package fakellm

// Wire names the fake's wire.
const Wire = "openai"
