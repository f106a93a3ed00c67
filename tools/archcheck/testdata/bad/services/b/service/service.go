// Package service wrongly imports another service.
package service

import a "github.com/picoclaw-suite/picoclaw/services/a/service"

// Name is the service's name.
const Name = "b after " + a.Name
