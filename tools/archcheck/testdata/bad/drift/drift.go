// Package drift is a dependency two modules require at different versions.
package drift
