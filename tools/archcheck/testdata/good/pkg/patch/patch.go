// Package patch is a value package.
package patch

// Marker starts a patch.
const Marker = "diff --git"
