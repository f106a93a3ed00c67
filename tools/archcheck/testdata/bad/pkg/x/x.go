// Package x is a pkg package that wrongly imports a service.
package x

import "github.com/picoclaw-suite/picoclaw/services/a/service"

// Name is the service's name.
const Name = service.Name
