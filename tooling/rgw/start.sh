#!/usr/bin/env bash
# Starts a real S3 server for tests and CI: Ceph RADOS Gateway (Debian's radosgw 16.x) on a
# one-node memstore cluster in a temp dir, with an S3 user and a bucket.
#
#   eval "$(tooling/rgw/start.sh)"    # exports S3_ENDPOINT, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY,
#                                     # S3_BUCKET, S3_REGION, S3_VERIFIES_UPLOAD_CHECKSUMS=false
#   tooling/rgw/stop.sh               # stops the daemons by pid and removes the temp dir
#
# stdout carries ONLY the export lines; every log goes to stderr. Running it again while the
# server it started is up prints the same exports without starting anything.
#
# Settings (environment): STOWAGE_RGW_STATE_DIR (default /tmp/stowage-rgw), STOWAGE_RGW_PORT
# (7480), STOWAGE_RGW_MON_PORT (6789), STOWAGE_RGW_BUCKET (stowage-test),
# STOWAGE_RGW_MEMSTORE_BYTES (4 GiB), STOWAGE_RGW_TIMEOUT (seconds to wait for readiness, 120).
set -euo pipefail

STATE_DIR="${STOWAGE_RGW_STATE_DIR:-/tmp/stowage-rgw}"
STATE_FILE="$STATE_DIR/state"
PORT="${STOWAGE_RGW_PORT:-7480}"
MON_PORT="${STOWAGE_RGW_MON_PORT:-6789}"
BUCKET="${STOWAGE_RGW_BUCKET:-stowage-test}"
MEMSTORE_BYTES="${STOWAGE_RGW_MEMSTORE_BYTES:-4294967296}"
TIMEOUT="${STOWAGE_RGW_TIMEOUT:-120}"
REGION="us-east-1"
HERE="$(cd "$(dirname "$0")" && pwd)"

log() { echo "[rgw] $*" >&2; }
die() {
  log "error: $*"
  exit 1
}

# Everything below writes to stderr unless it is an export line.
exec 3>&1 1>&2

print_exports() {
  # shellcheck disable=SC1090
  . "$STATE_FILE"
  printf 'export S3_ENDPOINT=%q\n' "$S3_ENDPOINT" >&3
  printf 'export S3_ACCESS_KEY_ID=%q\n' "$S3_ACCESS_KEY_ID" >&3
  printf 'export S3_SECRET_ACCESS_KEY=%q\n' "$S3_SECRET_ACCESS_KEY" >&3
  printf 'export S3_BUCKET=%q\n' "$S3_BUCKET" >&3
  printf 'export S3_REGION=%q\n' "$S3_REGION" >&3
  # RGW 16 signs x-amz-checksum-sha256 but stores a body that does not match it: uploads to it
  # must be verified after the fact.
  printf 'export S3_VERIFIES_UPLOAD_CHECKSUMS=false\n' >&3
}

# The SHA-256 of an empty body: RGW refuses SigV4 requests without x-amz-content-sha256, which
# curl does not add by itself.
EMPTY_SHA256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855

# An S3 request without a body, signed with SigV4 by curl itself; prints the HTTP status.
s3_request() {
  local method="$1" path="$2"
  curl -s -o /dev/null -w '%{http_code}' --max-time 10 -X "$method" -H "x-amz-content-sha256: $EMPTY_SHA256" \
    --aws-sigv4 "aws:amz:$REGION:s3" --user "$ACCESS_KEY:$SECRET_KEY" \
    "http://127.0.0.1:$PORT$path" || true
}

mkdir -p "$STATE_DIR"
exec 9>"$STATE_DIR/lock"
flock 9

# True when the cluster named in the state file has all its daemons alive and its bucket answers.
healthy() {
  local RUN_DIR S3_ENDPOINT S3_ACCESS_KEY_ID S3_SECRET_ACCESS_KEY S3_BUCKET S3_REGION pid_file
  # shellcheck disable=SC1090
  . "$STATE_FILE"
  [ -d "$RUN_DIR" ] || return 1
  for pid_file in mon.a osd.0 mgr.x client.rgw; do
    [ -f "$RUN_DIR/$pid_file.pid" ] || return 1
    kill -0 "$(cat "$RUN_DIR/$pid_file.pid")" 2>/dev/null || return 1
  done
  local status
  status="$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -H "x-amz-content-sha256: $EMPTY_SHA256" \
    --aws-sigv4 "aws:amz:$S3_REGION:s3" --user "$S3_ACCESS_KEY_ID:$S3_SECRET_ACCESS_KEY" \
    "$S3_ENDPOINT/$S3_BUCKET?list-type=2&max-keys=1" || true)"
  [ "$status" = "200" ]
}

# Already running from an earlier call: print the exports again.
if [ -f "$STATE_FILE" ]; then
  if healthy; then
    log "already running ($(grep '^RUN_DIR=' "$STATE_FILE" | cut -d= -f2-))"
    print_exports
    exit 0
  fi
  log "a previous cluster is not healthy; stopping what is left of it"
  STOWAGE_RGW_LOCKED=1 "$HERE/stop.sh"
fi

for binary in radosgw ceph-mon ceph-osd ceph-mgr monmaptool radosgw-admin ceph; do
  if ! command -v "$binary" >/dev/null 2>&1; then
    log "installing Ceph packages (radosgw ceph-mon ceph-osd ceph-mgr)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y radosgw ceph-mon ceph-osd ceph-mgr >&2 ||
      { apt-get update >&2 && apt-get install -y radosgw ceph-mon ceph-osd ceph-mgr >&2; } ||
      die "could not install radosgw ceph-mon ceph-osd ceph-mgr with apt-get (run as root)"
    break
  fi
done

for port in "$PORT" "$MON_PORT"; do
  if (exec 2>/dev/null; : </dev/tcp/127.0.0.1/"$port"); then
    die "port $port on 127.0.0.1 is in use by another program; set STOWAGE_RGW_PORT / STOWAGE_RGW_MON_PORT"
  fi
done

RUN_DIR="$(mktemp -d /tmp/stowage-rgw-run.XXXXXX)"
CONF="$RUN_DIR/ceph.conf"
FSID="$(cat /proc/sys/kernel/random/uuid)"
ACCESS_KEY="$(tr -dc 'A-Z0-9' </dev/urandom | head -c 20 || true)"
SECRET_KEY="$(tr -dc 'A-Za-z0-9' </dev/urandom | head -c 40 || true)"
mkdir -p "$RUN_DIR/log" "$RUN_DIR/mon.a" "$RUN_DIR/osd.0" "$RUN_DIR/mgr.x" "$RUN_DIR/rgw"

# Written before the daemons start so that stop.sh can clean up after a failed start.
cat >"$STATE_FILE" <<EOF
RUN_DIR=$RUN_DIR
S3_ENDPOINT=http://127.0.0.1:$PORT
S3_ACCESS_KEY_ID=$ACCESS_KEY
S3_SECRET_ACCESS_KEY=$SECRET_KEY
S3_BUCKET=$BUCKET
S3_REGION=$REGION
EOF

cat >"$CONF" <<EOF
[global]
fsid = $FSID
mon_host = v1:127.0.0.1:$MON_PORT
public_addr = 127.0.0.1
ms_bind_msgr2 = false
ms_bind_ipv6 = false
auth_cluster_required = none
auth_service_required = none
auth_client_required = none
keyring = $RUN_DIR/no-keyring
osd_pool_default_size = 1
osd_pool_default_min_size = 1
osd_pool_default_pg_num = 8
osd_pool_default_pgp_num = 8
osd_pool_default_pg_autoscale_mode = off
mon_max_pg_per_osd = 1000
mon_allow_pool_size_one = true
osd_crush_chooseleaf_type = 0
# A just-started OSD may ask the monitor to place it before it has the monitor's map and be
# refused ("wrong fsid"); this script places it in the CRUSH map itself instead.
osd_crush_update_on_start = false
osd_class_update_on_start = false
osd_objectstore = memstore
memstore_device_bytes = $MEMSTORE_BYTES
run_dir = $RUN_DIR
pid_file = $RUN_DIR/\$name.pid
admin_socket = $RUN_DIR/\$name.asok
log_file = $RUN_DIR/log/\$name.log
log_to_stderr = false
err_to_stderr = false

[mon.a]
mon_data = $RUN_DIR/mon.a

[osd.0]
osd_data = $RUN_DIR/osd.0

[mgr.x]
mgr_data = $RUN_DIR/mgr.x

[client.rgw]
# tcp_nodelay: without it every response with a body (a GET, an error) waited ~40 ms for the
# client's delayed ACK (Nagle's algorithm: a GET of 100 bytes took 48 ms here, a HEAD 2.6 ms).
rgw_frontends = beast endpoint=127.0.0.1:$PORT tcp_nodelay=1
rgw_data = $RUN_DIR/rgw
EOF
: >"$RUN_DIR/no-keyring"

fail() {
  log "start failed: $*; logs follow"
  tail -n 30 "$RUN_DIR"/log/*.log >&2 2>/dev/null || true
  [ "${STOWAGE_RGW_KEEP_ON_FAILURE:-}" = "1" ] || STOWAGE_RGW_LOCKED=1 "$HERE/stop.sh" || true
  exit 1
}

# Daemons must not inherit the lock (fd 9) or any of the caller's pipes: a daemon holding one
# would block the next start.sh/stop.sh, or keep "$(start.sh)" (or a log pipe) open forever.
daemon() { "$@" </dev/null >>"$RUN_DIR/log/daemon-start.log" 2>&1 3>&- 9>&-; }

log "starting a one-node memstore cluster in $RUN_DIR"
monmaptool --create --add a "v1:127.0.0.1:$MON_PORT" --fsid "$FSID" "$RUN_DIR/monmap" >&2 ||
  fail "monmaptool"
ceph-mon -c "$CONF" --mkfs -i a --monmap "$RUN_DIR/monmap" >&2 || fail "ceph-mon --mkfs"
daemon ceph-mon -c "$CONF" -i a || fail "ceph-mon"
OSD_ID="$(timeout 60 ceph -c "$CONF" osd create 2>>"$RUN_DIR/log/client.log")" || fail "ceph osd create"
[ "$OSD_ID" = "0" ] || fail "expected osd id 0, got '$OSD_ID'"
ceph-osd -c "$CONF" -i 0 --mkfs >&2 2>>"$RUN_DIR/log/client.log" || fail "ceph-osd --mkfs"
# The monitor once refused this step ("Error EPERM: problem getting command descriptions from
# mon", 2026-11-30, with `osd create` just accepted) and a start two minutes later went through:
# three tries a second apart. Adding osd.0 where it already is changes nothing.
placed=0
for _ in 1 2 3; do
  if timeout 60 ceph -c "$CONF" osd crush add osd.0 1.0 root=default host=localhost >&2 2>>"$RUN_DIR/log/client.log"; then
    placed=1
    break
  fi
  sleep 1
done
[ "$placed" = 1 ] || fail "ceph osd crush add"
daemon ceph-osd -c "$CONF" -i 0 || fail "ceph-osd"
daemon ceph-mgr -c "$CONF" -i x || fail "ceph-mgr"
daemon radosgw -c "$CONF" -n client.rgw || fail "radosgw"

deadline=$((SECONDS + TIMEOUT))
until curl -s -o /dev/null "http://127.0.0.1:$PORT/"; do
  [ "$SECONDS" -lt "$deadline" ] || fail "radosgw did not answer on port $PORT within ${TIMEOUT}s"
  sleep 0.5
done

log "creating the S3 user and bucket $BUCKET"
radosgw-admin -c "$CONF" user create --uid=stowage --display-name=stowage \
  --access-key="$ACCESS_KEY" --secret="$SECRET_KEY" >/dev/null 2>>"$RUN_DIR/log/client.log" ||
  fail "radosgw-admin user create"

# The first bucket creation creates RGW's pools lazily and can take a few seconds.
until [ "$(s3_request PUT "/$BUCKET")" = "200" ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "could not create bucket $BUCKET within ${TIMEOUT}s"
  sleep 1
done
[ "$(s3_request GET "/$BUCKET?list-type=2&max-keys=1")" = "200" ] || fail "bucket $BUCKET is not listable"

log "ready: http://127.0.0.1:$PORT bucket $BUCKET"
print_exports
