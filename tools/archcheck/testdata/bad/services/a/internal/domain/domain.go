// Package domain wrongly imports a pkg package that is not a value package.
package domain

import "github.com/picoclaw-suite/picoclaw/pkg/x"

// Name is the service's name.
const Name = x.Name
