#!/usr/bin/env bash
# Builds every service's image without a Docker engine: `make images` (CI runs it).
#   deploy/images.sh OUT_DIR      env: KO, CRANE (pinned binaries), VERSION, COMMIT
#
# deploy/Dockerfile is the image definition for Docker, buildah and podman; its bases
# (golang, gcr.io/distroless/static-debian12, debian:bookworm-slim) are pinned by digest on
# registries that a machine reaching only package registries (CI here) cannot pull from. So
# this script builds the same images with ko, on bases it makes from Debian packages:
#   static  — what distroless/static gives a Go binary: /etc/passwd with nonroot (65532), CA
#             certificates, time zones, /tmp; user 65532:65532 (every service but the executor);
#   sandbox — Debian bookworm minbase + bash, git, ca-certificates (mmdebstrap), the nonroot
#             user, /workspace and /executor-state owned by it (the executor, like the
#             Dockerfile's RUNTIME=sandbox). Its /var/run is a directory, not the link to /run:
#             ko puts its data directory at /var/run/ko.
# The binaries are built as the Dockerfile builds them (CGO off, -tags serveronly, -trimpath,
# stripped, version and commit stamped). Bases and images go through a registry on 127.0.0.1
# that lives only as long as this script; the result is one OCI layout per image in
# OUT_DIR/<service>. Each image is checked: non-root user, its binary runs, reports the stamped
# version and links no SQLite; the executor's image has bash and git, and runs git as the
# service's user.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:?usage: deploy/images.sh OUT_DIR}"
: "${KO:?set KO to the ko binary}" "${CRANE:?set CRANE to the crane binary}"
VERSION="${VERSION:-dev}"
COMMIT="${COMMIT:-}"
export VERSION COMMIT
tag="$(printf '%s' "$VERSION" | tr -c 'A-Za-z0-9_.-' '-')"
services=(gateway-line gateway-slack chat-mio router-shiro coder-order approval executor heartbeat)

for f in /etc/ssl/certs/ca-certificates.crt /usr/share/zoneinfo/Asia/Tokyo; do
	[ -e "$f" ] || { echo "images: $f missing (apt-get install ca-certificates tzdata)" >&2; exit 1; }
done
command -v mmdebstrap >/dev/null || { echo "images: mmdebstrap missing (apt-get install mmdebstrap)" >&2; exit 1; }

work="$(mktemp -d)"
regpid=""
cleanup() {
	[ -n "$regpid" ] && kill "$regpid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

echo "images: deploy/Dockerfile is not built by this script: it needs its digest-pinned bases from gcr.io and"
echo "images: Docker Hub, and CI's network reaches only package registries (and CI has no Docker engine)."
echo "images: building the same images with ko, on bases made here from Debian packages."

"$CRANE" registry serve --address 127.0.0.1:0 >"$work/registry.log" 2>&1 &
regpid=$!
port=""
for _ in $(seq 50); do
	port="$(sed -n 's/.*serving on port \([0-9]*\).*/\1/p' "$work/registry.log")"
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || { cat "$work/registry.log" >&2; exit 1; }
reg="127.0.0.1:$port"

# base REF TAR... : an image of the given layers for linux/amd64, running as 65532.
base() {
	local ref="$1"
	shift
	local layers=()
	for l in "$@"; do layers+=(-f "$l"); done
	{
		"$CRANE" append --oci-empty-base "${layers[@]}" -t "$ref:layers" &&
			"$CRANE" mutate "$ref:layers" --set-platform linux/amd64 --user 65532:65532 \
				--env PATH=/usr/local/bin:/usr/bin:/bin --env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
				-t "$ref:base"
	} >"$work/crane.log" 2>&1 || { cat "$work/crane.log" >&2; exit 1; }
	echo "$ref@$("$CRANE" digest "$ref:base")"
}

# The static base.
root="$work/static"
mkdir -p "$root/etc/ssl/certs" "$root/usr/share" "$root/tmp" "$root/home/nonroot"
cat >"$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
EOF
printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' >"$root/etc/group"
printf 'hosts: files dns\n' >"$root/etc/nsswitch.conf"
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
cp -r /usr/share/zoneinfo "$root/usr/share/"
chmod 1777 "$root/tmp"
chmod 0700 "$root/home/nonroot"
tar --sort=name --mtime=@0 --numeric-owner --owner=0 --group=0 -C "$root" -cf "$work/static.tar" etc usr tmp
tar --sort=name --mtime=@0 --numeric-owner --owner=65532 --group=65532 -C "$root" -cf "$work/home.tar" home/nonroot
static="$(base "$reg/base/static" "$work/static.tar" "$work/home.tar")"
echo "images: static base $static"

# The sandbox base (the executor's): Debian packages, as the Dockerfile's runtime-sandbox stage.
SOURCE_DATE_EPOCH=0 mmdebstrap --quiet --variant=minbase --include=bash,git,ca-certificates \
	--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--customize-hook='chroot "$1" groupadd --gid 65532 nonroot' \
	--customize-hook='chroot "$1" useradd --uid 65532 --gid 65532 --create-home --home-dir /home/nonroot nonroot' \
	--customize-hook='mkdir -p "$1/workspace" "$1/executor-state" && chown 65532:65532 "$1/workspace" "$1/executor-state"' \
	--customize-hook='rm "$1/var/run" && mkdir -m 0755 "$1/var/run"' \
	bookworm "$work/sandbox.tar"
sandbox="$(base "$reg/base/sandbox" "$work/sandbox.tar")"
echo "images: sandbox base $sandbox"

# ko: one build per service, flags as in deploy/Dockerfile and the Makefile's release build.
prefix=github.com/picoclaw-suite/picoclaw
{
	echo "defaultBaseImage: $static"
	echo "baseImageOverrides:"
	echo "  $prefix/services/executor/cmd/executor: $sandbox"
	echo "defaultPlatforms: [linux/amd64]"
	echo "builds:"
	for s in "${services[@]}"; do
		cat <<EOF
  - id: $s
    main: ./services/$s/cmd/$s
    env: [CGO_ENABLED=0]
    flags: [-tags=serveronly, -trimpath]
    ldflags:
      - -s -w
      - -X $prefix/pkg/buildinfo.version={{.Env.VERSION}}
      - -X $prefix/pkg/buildinfo.commit={{.Env.COMMIT}}
EOF
	done
} >"$work/.ko.yaml"
pkgs=()
for s in "${services[@]}"; do pkgs+=("./services/$s/cmd/$s"); done
KO_CONFIG_PATH="$work/.ko.yaml" KO_DOCKER_REPO="$reg/picoclaw" KOCACHE="$work/kocache" \
	"$KO" build --base-import-paths --tags "$tag" --sbom=none --image-refs "$work/refs" "${pkgs[@]}" >"$work/ko.log" 2>&1 ||
	{ cat "$work/ko.log" >&2; exit 1; }

# Check every image: the user, the entrypoint, and that its binary runs and says its version.
refs=()
printf '%-14s %-74s %s\n' image digest rootfs
for s in "${services[@]}"; do
	ref="$reg/picoclaw/$s:$tag"
	refs+=("$ref")
	cfg="$("$CRANE" config "$ref")"
	case "$cfg" in *'"User":"65532:65532"'*) ;; *) echo "images: $s does not run as 65532: $cfg" >&2; exit 1 ;; esac
	case "$cfg" in *"\"Entrypoint\":[\"/ko-app/$s\"]"*) ;; *) echo "images: $s entrypoint: $cfg" >&2; exit 1 ;; esac
	fs="$work/fs-$s"
	mkdir -p "$fs"
	"$CRANE" export "$ref" - | tar -x -C "$fs" 2> >(grep -v "Removing leading" >&2)
	got="$("$fs/ko-app/$s" --version)"
	# -tags serveronly: no SQLite in a service's image (it runs on Redis and Postgres).
	mods="$(go version -m "$fs/ko-app/$s")"
	case "$mods" in *modernc.org/sqlite*) echo "images: $s links modernc.org/sqlite: not built with -tags serveronly" >&2; exit 1 ;; esac
	case "$got" in *"$VERSION"*) ;; *) echo "images: $s --version says $got, want $VERSION" >&2; exit 1 ;; esac
	if [ "$s" = executor ]; then
		for tool in /usr/bin/bash /usr/bin/git; do
			[ -x "$fs$tool" ] || { echo "images: the executor's image lacks $tool" >&2; exit 1; }
		done
		[ "$(stat -c %u "$fs/workspace")" = 65532 ] || { echo "images: /workspace is not the service user's" >&2; exit 1; }
		if [ "$(id -u)" = 0 ]; then
			chroot --userspec=65532:65532 "$fs" /usr/bin/git --version >/dev/null
		fi
	fi
	printf '%-14s %-74s %s\n' "$s" "$("$CRANE" digest "$ref")" "$(du -sh "$fs" | cut -f1)"
	rm -rf "$fs"
done

# One OCI layout per image: skopeo copy oci:OUT_DIR/<service> docker-daemon:picoclaw/<service>:TAG,
# podman pull oci:OUT_DIR/<service>, or crane push OUT_DIR/<service> <registry>/<repo>.
rm -rf "$out"
mkdir -p "$out"
for s in "${services[@]}"; do
	"$CRANE" pull --format=oci "$reg/picoclaw/$s:$tag" "$out/$s"
	echo "$s $tag $("$CRANE" digest "$reg/picoclaw/$s:$tag")" >>"$out/digests.txt"
done
echo "images: ${#services[@]} images ($tag) in $out/<service> (OCI layouts), digests in $out/digests.txt"
