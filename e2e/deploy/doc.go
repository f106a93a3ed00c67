// Package deploy checks what the suite ships for running it elsewhere: the image definitions,
// the docker compose stack and the Kubernetes manifests under deploy/k8s (rendered with
// kustomize, held against the authorization matrix).
package deploy
