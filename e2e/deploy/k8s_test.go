package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
)

const (
	k8sDir  = "../../deploy/k8s"
	overlay = "overlays/production"
	nameKey = "app.kubernetes.io/name"
)

// publicServices are the only services with a listener reachable from outside the cluster
// (docs/security.md: public and internal surfaces are separate listeners).
var publicServices = []string{svcauth.GatewayLine, svcauth.GatewaySlack, svcauth.Approval}

// singleReplica are the services docs/scaling.md runs once; every other one is tested with
// several replicas (pkg/inbox, approval's and the executor's replica tests).
var singleReplica = []string{svcauth.Heartbeat}

// manifests is the production overlay rendered the way `kubectl apply -k` does, decoded into
// the API types (unknown fields are errors).
type manifests struct {
	deployments map[string]*appsv1.Deployment
	services    map[string]*corev1.Service
	secrets     map[string]*corev1.Secret
	configMaps  map[string]*corev1.ConfigMap
	pvcs        map[string]*corev1.PersistentVolumeClaim
	pdbs        map[string]*policyv1.PodDisruptionBudget
	policies    map[string]*networkingv1.NetworkPolicy
}

// renderProduction copies deploy/k8s (without any secrets written there) to a temporary
// directory, writes the overlay's secrets with deploy/k8s/secrets.sh from a fresh key set, and
// renders the overlay with kustomize.
func renderProduction(t *testing.T) (*manifests, map[string]svcauth.KeyPair) {
	t.Helper()
	dir := t.TempDir()
	err := filepath.WalkDir(k8sDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(k8sDir, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		if strings.HasSuffix(rel, ".env") && rel != filepath.Join(overlay, "settings.env") {
			return nil // secrets written by secrets.sh: never part of the tree
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := svcauth.GenerateSuite()
	if err != nil {
		t.Fatal(err)
	}
	// What `picoclaw keys` prints.
	in := "PICOCLAW_AUTH_PUBLIC_KEYS=" + strings.Join(svcauth.PublicEntries(keys), ",") + "\n"
	for _, id := range svcauth.Identities() {
		in += "PICOCLAW_SERVICE_KEY_" + strings.ToUpper(strings.ReplaceAll(id, "-", "_")) + "=" + keys[id].Private + "\n"
	}
	cmd := exec.Command("bash", filepath.Join(dir, "secrets.sh"), filepath.Join(dir, overlay))
	cmd.Stdin = strings.NewReader(in)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("secrets.sh: %v\n%s", err, out)
	}
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(dir, overlay))
	if err != nil {
		t.Fatalf("kustomize build %s: %v", overlay, err)
	}
	m := &manifests{deployments: map[string]*appsv1.Deployment{}, services: map[string]*corev1.Service{},
		secrets: map[string]*corev1.Secret{}, configMaps: map[string]*corev1.ConfigMap{}, pvcs: map[string]*corev1.PersistentVolumeClaim{},
		pdbs: map[string]*policyv1.PodDisruptionBudget{}, policies: map[string]*networkingv1.NetworkPolicy{}}
	for _, r := range res.Resources() {
		b, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		name := r.GetName()
		var dst any
		switch r.GetKind() {
		case "Deployment":
			dst = put(m.deployments, name)
		case "Service":
			dst = put(m.services, name)
		case "Secret":
			dst = put(m.secrets, name)
		case "ConfigMap":
			dst = put(m.configMaps, name)
		case "PersistentVolumeClaim":
			dst = put(m.pvcs, name)
		case "PodDisruptionBudget":
			dst = put(m.pdbs, name)
		case "NetworkPolicy":
			dst = put(m.policies, name)
		default:
			t.Fatalf("%s %s: a kind without a vendored schema (add it to kinds in schema_test.go)", r.GetKind(), name)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(dst); err != nil {
			t.Fatalf("%s %s: %v", r.GetKind(), name, err)
		}
		if ns := r.GetNamespace(); ns != "picoclaw" {
			t.Errorf("%s %s in namespace %q", r.GetKind(), name, ns)
		}
	}
	return m, keys
}

func put[T any](m map[string]*T, name string) *T {
	v := new(T)
	m[name] = v
	return v
}

// byPrefix finds a generated object (kustomize appends a content hash to its name).
func byPrefix[T any](t *testing.T, m map[string]*T, name string) *T {
	t.Helper()
	var found []string
	for n := range m {
		if n == name || strings.HasPrefix(n, name+"-") && !slices.Contains(svcauth.Identities(), n) {
			found = append(found, n)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one object named %s(-hash), got %v", name, found)
	}
	return m[found[0]]
}

// TestManifests checks every Deployment of the production overlay: one per service, non-root
// with a read-only root file system and no capabilities, probes on /healthz and /readyz,
// requests and limits, its own Secret holding its own key, a Service whose ports match the
// configuration, a disruption budget that lets a node drain, and replica counts
// docs/scaling.md supports.
func TestManifests(t *testing.T) {
	m, keys := renderProduction(t)
	if got := slices.Sorted(maps.Keys(m.deployments)); !slices.Equal(got, slices.Sorted(slices.Values(svcauth.Services()))) {
		t.Fatalf("Deployments %v, want one per service %v", got, svcauth.Services())
	}
	cfgMap := byPrefix(t, m.configMaps, "picoclaw-config")
	cfg := config.DefaultCommon()
	if err := config.Decode([]byte(cfgMap.Data["config.yaml"]), &cfg); err != nil {
		t.Fatalf("config.yaml of the picoclaw-config ConfigMap: %v", err)
	}
	env := byPrefix(t, m.configMaps, "picoclaw-env")
	if want := strings.Join(svcauth.PublicEntries(keys), ","); env.Data["PICOCLAW_AUTH_PUBLIC_KEYS"] != want {
		t.Errorf("picoclaw-env PICOCLAW_AUTH_PUBLIC_KEYS = %q, want the suite's public keys", env.Data["PICOCLAW_AUTH_PUBLIC_KEYS"])
	}
	checkEnvNames(t, "the picoclaw-env ConfigMap", slices.Collect(maps.Keys(env.Data)))
	for name, s := range m.secrets {
		checkEnvNames(t, "Secret "+name, slices.Collect(maps.Keys(s.Data)))
	}
	secretOwners := map[string]string{}
	for name, d := range m.deployments {
		t.Run(name, func(t *testing.T) {
			checkDeployment(t, m, d, cfg, keys, secretOwners)
		})
	}
}

func checkDeployment(t *testing.T, m *manifests, d *appsv1.Deployment, cfg config.Common, keys map[string]svcauth.KeyPair, secretOwners map[string]string) {
	name := d.Name
	pod := d.Spec.Template.Spec
	if d.Spec.Template.Labels[nameKey] != name || d.Spec.Selector.MatchLabels[nameKey] != name {
		t.Errorf("pods not labelled %s=%s: %v / %v", nameKey, name, d.Spec.Template.Labels, d.Spec.Selector.MatchLabels)
	}
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	if slices.Contains(singleReplica, name) && replicas != 1 {
		t.Errorf("replicas = %d; docs/scaling.md runs %s once", replicas, name)
	}
	if !slices.Contains(singleReplica, name) && replicas < 2 {
		t.Errorf("replicas = %d; the production overlay runs every replicable service at least twice", replicas)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Error("the service account token is mounted (no service talks to the Kubernetes API)")
	}
	psc := pod.SecurityContext
	if psc == nil || psc.RunAsUser == nil || *psc.RunAsUser == 0 || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.FSGroup == nil {
		t.Errorf("pod securityContext %+v: want a non-root runAsUser, runAsNonRoot and an fsGroup (volumes writable by the service)", psc)
	}
	if len(pod.Containers) != 1 || len(pod.InitContainers) != 0 {
		t.Fatalf("want one container, got %d (+%d init)", len(pod.Containers), len(pod.InitContainers))
	}
	c := pod.Containers[0]
	sc := c.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil ||
		*sc.AllowPrivilegeEscalation || sc.Privileged != nil && *sc.Privileged || sc.Capabilities == nil ||
		!slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 {
		t.Errorf("container securityContext %+v: want a read-only root, no privilege escalation, every capability dropped", sc)
	}
	seccomp := psc.SeccompProfile
	if sc != nil && sc.SeccompProfile != nil {
		seccomp = sc.SeccompProfile
	}
	// Only the executor leaves seccomp to its own sandbox, which needs namespaces the runtime's
	// default profile refuses; it runs in its own user namespace for that.
	if name == svcauth.Executor {
		if pod.HostUsers == nil || *pod.HostUsers {
			t.Error("the executor needs hostUsers: false for its sandbox (docs/security.md)")
		}
	} else if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("seccomp profile %+v, want RuntimeDefault", seccomp)
	}
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	ep, ok := cfg.Services.Endpoint(name)
	if !ok {
		t.Fatalf("no services.%s in config.yaml", name)
	}
	checkListen(t, "listen", ep.Listen, ports["rpc"])
	if slices.Contains(publicServices, name) {
		checkListen(t, "public_listen", ep.PublicListen, ports["public"])
	} else if _, ok := ports["public"]; ok || ep.PublicListen != "" {
		t.Errorf("%s has a public port (%v) or public_listen (%q); only %v do", name, ports, ep.PublicListen, publicServices)
	}
	for _, p := range []struct {
		what  string
		probe *corev1.Probe
		path  string
	}{{"liveness", c.LivenessProbe, "/healthz"}, {"readiness", c.ReadinessProbe, "/readyz"}, {"startup", c.StartupProbe, "/healthz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port.String() != "rpc" {
			t.Errorf("%s probe %+v, want GET %s on the rpc port", p.what, p.probe, p.path)
		}
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, lim := c.Resources.Requests[r], c.Resources.Limits[r]
		if req.IsZero() || lim.IsZero() || req.Cmp(lim) > 0 {
			t.Errorf("%s: request %s, limit %s: want both, request <= limit", r, req.String(), lim.String())
		}
	}
	// Configuration: the file, the shared settings, and this service's own Secret.
	var envNames []string
	for _, e := range c.Env {
		envNames = append(envNames, e.Name)
	}
	checkEnvNames(t, "the container", envNames)
	var secretName string
	for _, from := range c.EnvFrom {
		switch {
		case from.SecretRef != nil:
			if secretName != "" {
				t.Errorf("two Secrets: %s and %s", secretName, from.SecretRef.Name)
			}
			secretName = from.SecretRef.Name
		case from.ConfigMapRef != nil:
			if !strings.HasPrefix(from.ConfigMapRef.Name, "picoclaw-env-") {
				t.Errorf("envFrom ConfigMap %s", from.ConfigMapRef.Name)
			}
		}
	}
	secret, ok := m.secrets[secretName]
	if !ok || !strings.HasPrefix(secretName, name+"-") {
		t.Fatalf("envFrom Secret %q: want this service's own generated Secret %s-<hash>", secretName, name)
	}
	if other, dup := secretOwners[secretName]; dup {
		t.Errorf("Secret %s is also used by %s", secretName, other)
	}
	secretOwners[secretName] = name
	if got := string(secret.Data["PICOCLAW_SERVICE_KEY"]); got != keys[name].Private {
		t.Errorf("Secret %s does not hold %s's own key", secretName, name)
	}
	for id, k := range keys {
		for key, v := range secret.Data {
			if id != name && string(v) == k.Private {
				t.Errorf("Secret %s holds %s's key in %s", secretName, id, key)
			}
		}
	}
	// Only the executor writes to volumes that outlive the pod: the workspace and, beside it,
	// the state its replicas share.
	mounts := map[string]string{}
	for _, vm := range c.VolumeMounts {
		mounts[vm.MountPath] = vm.Name
	}
	claims := map[string]string{}
	for _, v := range pod.Volumes {
		if v.PersistentVolumeClaim != nil {
			claims[v.Name] = v.PersistentVolumeClaim.ClaimName
		}
	}
	if name == svcauth.Executor {
		ws, state := claims[mounts["/workspace"]], claims[mounts["/executor-state"]]
		if ws == "" || state == "" || ws == state || m.pvcs[ws] == nil || m.pvcs[state] == nil {
			t.Errorf("workspace claim %q, state claim %q: want two PersistentVolumeClaims of the overlay", ws, state)
		}
		if pvc := m.pvcs[ws]; pvc != nil && slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteOnce) && replicas > 1 {
			if pod.Affinity == nil || pod.Affinity.PodAffinity == nil || len(pod.Affinity.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) == 0 ||
				pod.Affinity.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey != "kubernetes.io/hostname" {
				t.Error("several executors on a ReadWriteOnce workspace must share a node (pod affinity on kubernetes.io/hostname)")
			}
		}
		// The config file names the same paths (the state directory beside the workspace).
		var exec struct {
			Executor struct {
				Workspace string `json:"workspace"`
				StateDir  string `json:"state_dir"`
			} `json:"executor"`
		}
		if err := yaml.Unmarshal([]byte(byPrefix(t, m.configMaps, "picoclaw-config").Data["config.yaml"]), &exec); err != nil {
			t.Fatal(err)
		}
		if exec.Executor.Workspace != "/workspace" || exec.Executor.StateDir != "/executor-state" {
			t.Errorf("config.yaml executor.workspace %q, state_dir %q: want the mounted /workspace and /executor-state", exec.Executor.Workspace, exec.Executor.StateDir)
		}
	} else if len(claims) > 0 {
		t.Errorf("claims %v: only the executor keeps state on volumes", claims)
	}
	// The Service other services call (services.<name>.url) and the disruption budget.
	svc := m.services[name]
	if svc == nil {
		t.Fatalf("no Service %s", name)
	}
	if svc.Spec.Selector[nameKey] != name {
		t.Errorf("Service selector %v", svc.Spec.Selector)
	}
	for _, p := range svc.Spec.Ports {
		if ports[p.TargetPort.String()] == 0 {
			t.Errorf("Service port %s targets %s, which the container does not have", p.Name, p.TargetPort.String())
		}
		if p.Name == "rpc" && ep.URL != fmt.Sprintf("http://%s:%d", name, p.Port) {
			t.Errorf("services.%s.url = %s, the Service serves rpc on %d", name, ep.URL, p.Port)
		}
	}
	pdb := m.pdbs[name]
	if pdb == nil || pdb.Spec.Selector == nil || pdb.Spec.Selector.MatchLabels[nameKey] != name {
		t.Fatalf("no PodDisruptionBudget selecting %s", name)
	}
	// A budget that allows no eviction at the overlay's replica count would block node drains.
	allowed := int32(0)
	switch {
	case pdb.Spec.MaxUnavailable != nil:
		allowed = pdb.Spec.MaxUnavailable.IntVal
	case pdb.Spec.MinAvailable != nil:
		allowed = replicas - pdb.Spec.MinAvailable.IntVal
	}
	if allowed < 1 || (replicas > 1 && allowed >= replicas) {
		t.Errorf("disruption budget allows %d of %d replicas to go at once: want at least one, and never all", allowed, replicas)
	}
}

func checkListen(t *testing.T, key, listen string, port int32) {
	t.Helper()
	_, p, err := net.SplitHostPort(listen)
	if err != nil || p != strconv.Itoa(int(port)) || port == 0 {
		t.Errorf("%s %q does not match the container port %d", key, listen, port)
	}
}

// TestNetworkPolicies holds the NetworkPolicies against the authorization matrix: all ingress
// is refused but for the public ports of the gateways and approval (from anywhere) and, on
// each internal RPC port, exactly the callers the matrix allows — no edge it lacks, every edge
// it has — and the metrics scraper (scrapePolicy, TestPrometheusScrapesEveryService). The cli
// identity runs on the operator's machine, not in the cluster.
func TestNetworkPolicies(t *testing.T) {
	m, _ := renderProduction(t)
	want := map[string]bool{}
	for _, r := range svcauth.Matrix() {
		for _, server := range r.Servers {
			for _, caller := range r.Callers {
				if server != svcauth.CLI && caller != svcauth.CLI {
					want[caller+" -> "+server] = true
				}
			}
		}
	}
	got := map[string]bool{}
	public := map[string]bool{}
	var denyAll bool
	for pname, p := range m.policies {
		if !slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
			t.Errorf("%s: policyTypes %v lacks Ingress", pname, p.Spec.PolicyTypes)
		}
		if pname == scrapePolicy {
			continue
		}
		target := p.Spec.PodSelector.MatchLabels[nameKey]
		if len(p.Spec.PodSelector.MatchLabels) == 0 && len(p.Spec.PodSelector.MatchExpressions) == 0 {
			if len(p.Spec.Ingress) != 0 {
				t.Errorf("%s selects every pod and allows %v", pname, p.Spec.Ingress)
			}
			denyAll = true
			continue
		}
		d := m.deployments[target]
		if d == nil || len(p.Spec.PodSelector.MatchLabels) != 1 || len(p.Spec.PodSelector.MatchExpressions) != 0 {
			t.Errorf("%s selects %v, not one service's pods", pname, p.Spec.PodSelector)
			continue
		}
		for _, rule := range p.Spec.Ingress {
			if len(rule.Ports) == 0 {
				t.Errorf("%s: a rule without ports opens every port of %s: %+v", pname, target, rule)
				continue
			}
			for _, port := range rule.Ports {
				if port.Port == nil {
					t.Errorf("%s: a rule for every port", pname)
					continue
				}
				switch port.Port.String() {
				case "rpc":
					if len(rule.From) == 0 {
						t.Errorf("%s: the internal port of %s is open to everyone", pname, target)
					}
					for _, peer := range rule.From {
						caller := peer.PodSelector.MatchLabels[nameKey]
						if peer.NamespaceSelector != nil || peer.IPBlock != nil || peer.PodSelector == nil ||
							len(peer.PodSelector.MatchLabels) != 1 || m.deployments[caller] == nil {
							t.Errorf("%s: peer %+v is not one service of the suite", pname, peer)
							continue
						}
						got[caller+" -> "+target] = true
					}
				case "public":
					if len(rule.From) != 0 {
						t.Errorf("%s: the public port of %s is limited to %v (an Ingress controller could not reach it)", pname, target, rule.From)
					}
					public[target] = true
				default:
					t.Errorf("%s: port %s of %s is neither rpc nor public", pname, port.Port.String(), target)
				}
			}
		}
	}
	if !denyAll {
		t.Error("no NetworkPolicy refuses by default the ingress of every pod")
	}
	for e := range want {
		if !got[e] {
			t.Errorf("the matrix allows %s, the NetworkPolicies do not", e)
		}
	}
	for e := range got {
		if !want[e] {
			t.Errorf("the NetworkPolicies allow %s, the matrix does not", e)
		}
	}
	if gotPublic := slices.Sorted(maps.Keys(public)); !slices.Equal(gotPublic, slices.Sorted(slices.Values(publicServices))) {
		t.Errorf("reachable from outside: %v, want %v", gotPublic, publicServices)
	}
}

// scrapePolicy is the NetworkPolicy that lets Prometheus reach the metrics.
const scrapePolicy = "prometheus-scrape"

// TestPrometheusScrapesEveryService: every service's pods admit, on the port their metrics are
// served on (the internal listener, rpc), the pods labelled app.kubernetes.io/name=prometheus of
// the namespace named monitoring — both at once (one peer), not either — and nothing else
// through that policy.
func TestPrometheusScrapesEveryService(t *testing.T) {
	m, _ := renderProduction(t)
	p := m.policies[scrapePolicy]
	if p == nil {
		t.Fatalf("no NetworkPolicy %s", scrapePolicy)
	}
	const partOf = "app.kubernetes.io/part-of"
	if sel := p.Spec.PodSelector; len(sel.MatchExpressions) != 0 || !maps.Equal(sel.MatchLabels, map[string]string{partOf: "picoclaw"}) {
		t.Fatalf("%s selects %v, want every pod of the suite", scrapePolicy, sel)
	}
	if len(p.Spec.Ingress) != 1 || len(p.Spec.Ingress[0].Ports) != 1 || len(p.Spec.Ingress[0].From) != 1 {
		t.Fatalf("%s: want one rule, one port, one peer: %+v", scrapePolicy, p.Spec.Ingress)
	}
	rule := p.Spec.Ingress[0]
	if port := rule.Ports[0]; port.Port == nil || port.Port.String() != "rpc" || port.Protocol == nil || *port.Protocol != corev1.ProtocolTCP || port.EndPort != nil {
		t.Errorf("%s admits port %+v, want rpc/TCP", scrapePolicy, port)
	}
	peer := rule.From[0]
	if peer.IPBlock != nil || peer.NamespaceSelector == nil || peer.PodSelector == nil ||
		len(peer.NamespaceSelector.MatchExpressions) != 0 || len(peer.PodSelector.MatchExpressions) != 0 ||
		!maps.Equal(peer.NamespaceSelector.MatchLabels, map[string]string{"kubernetes.io/metadata.name": "monitoring"}) ||
		!maps.Equal(peer.PodSelector.MatchLabels, map[string]string{nameKey: "prometheus"}) {
		t.Errorf("%s admits %+v, want the prometheus pods of the monitoring namespace", scrapePolicy, peer)
	}
	// Every service is selected, and serves its metrics on the port named rpc: the listener
	// config.yaml gives it (checked against the port by TestManifests), where /metrics is.
	if got := slices.Sorted(maps.Keys(m.deployments)); !slices.Equal(got, slices.Sorted(slices.Values(svcauth.Services()))) {
		t.Fatalf("Deployments %v, want one per service %v", got, svcauth.Services())
	}
	for name, d := range m.deployments {
		if d.Spec.Template.Labels[partOf] != "picoclaw" {
			t.Errorf("%s: its pods lack %s=picoclaw: Prometheus cannot reach them", name, partOf)
		}
		rpc := false
		for _, c := range d.Spec.Template.Spec.Containers {
			for _, port := range c.Ports {
				rpc = rpc || port.Name == "rpc"
			}
		}
		if !rpc {
			t.Errorf("%s: no container port named rpc (its metrics listener)", name)
		}
	}
}
