// Package domain imports only a value package.
package domain

import "github.com/picoclaw-suite/picoclaw/pkg/patch"

// Marker starts a patch.
const Marker = patch.Marker
