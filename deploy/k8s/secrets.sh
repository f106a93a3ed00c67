#!/usr/bin/env bash
# Writes the files the production overlay makes its Secrets and the public-keys ConfigMap from:
#   picoclaw keys | deploy/k8s/secrets.sh [OVERLAY_DIR]
# Input: the lines of `picoclaw keys`. Output, in OVERLAY_DIR (default overlays/production):
#   public-keys.env           PICOCLAW_AUTH_PUBLIC_KEYS (every service)
#   cli.env                   the operator's picoclaw CLI: its key and the public keys (no pod)
#   secrets/<service>.env     that service's own PICOCLAW_SERVICE_KEY and only the secrets it reads
# A Redis password, the audit key and an approver token are generated here; the channel and
# cloud credentials and the Postgres DSNs are written as replace-with-… values, which the
# services refuse to start with: put the real ones in before deploying. Existing files are
# never overwritten (rotation: docs/security.md). The files stay out of git (.gitignore).
set -euo pipefail
dir="${1:-$(dirname "$0")/overlays/production}"
mkdir -p "$dir/secrets"
umask 077

declare -A key
public=""
while IFS= read -r line; do
	case "$line" in
	PICOCLAW_AUTH_PUBLIC_KEYS=*) public="$line" ;;
	PICOCLAW_SERVICE_KEY_*=*)
		name="${line%%=*}"
		key["${name#PICOCLAW_SERVICE_KEY_}"]="${line#*=}"
		;;
	esac
done
[ -n "$public" ] || { echo "no PICOCLAW_AUTH_PUBLIC_KEYS line on stdin: run picoclaw keys | $0" >&2; exit 2; }

random() { od -An -N32 -tx1 /dev/urandom | tr -d ' \n'; }
redis_password="$(random)"
approver_token="$(random)"

write() { # file, then its lines
	local f="$dir/$1"
	shift
	if [ -e "$f" ]; then
		echo "kept $f (exists)" >&2
		return
	fi
	printf '%s\n' "$@" >"$f"
	echo "wrote $f" >&2
}
own() { # the PICOCLAW_SERVICE_KEY line of one service
	local id="${1^^}"
	id="${id//-/_}"
	[ -n "${key[$id]:-}" ] || { echo "no PICOCLAW_SERVICE_KEY_$id line on stdin" >&2; exit 2; }
	echo "PICOCLAW_SERVICE_KEY=${key[$id]}"
}

write public-keys.env "$public"
write secrets/gateway-line.env "$(own gateway-line)" "REDIS_PASSWORD=$redis_password" \
	LINE_CHANNEL_SECRET=replace-with-channel-secret LINE_CHANNEL_ACCESS_TOKEN=replace-with-channel-access-token \
	"PICOCLAW_APPROVAL_TOKENS=admin:$approver_token"
write secrets/gateway-slack.env "$(own gateway-slack)" "REDIS_PASSWORD=$redis_password" \
	SLACK_SIGNING_SECRET=replace-with-signing-secret SLACK_BOT_TOKEN=xoxb-replace-me \
	"PICOCLAW_APPROVAL_TOKENS=admin:$approver_token"
write secrets/chat-mio.env "$(own chat-mio)" "REDIS_PASSWORD=$redis_password"
write secrets/router-shiro.env "$(own router-shiro)"
write secrets/coder-order.env "$(own coder-order)" OPENAI_API_KEY= DEEPSEEK_API_KEY= ANTHROPIC_API_KEY=
write secrets/approval.env "$(own approval)" "REDIS_PASSWORD=$redis_password" \
	"PICOCLAW_AUDIT_KEY=$(random)" PICOCLAW_AUDIT_OLD_KEYS= "PICOCLAW_APPROVAL_TOKENS=admin:$approver_token" \
	PICOCLAW_POSTGRES_DSN=postgres://picoclaw_app:replace-with-password@postgres:5432/picoclaw \
	PICOCLAW_POSTGRES_MIGRATE_DSN=postgres://picoclaw:replace-with-password@postgres:5432/picoclaw
write secrets/executor.env "$(own executor)"
write secrets/heartbeat.env "$(own heartbeat)" "REDIS_PASSWORD=$redis_password"
# The terminal identity's key runs no pod: it stays with the operator (picoclaw chat, status).
write cli.env "PICOCLAW_SERVICE_KEY=${key[CLI]:-}" "$public"
