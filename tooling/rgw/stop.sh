#!/usr/bin/env bash
# Stops the Ceph RGW cluster that tooling/rgw/start.sh started: each daemon by the pid in its
# run dir (never by process name, so other Ceph processes on the machine are left alone), then
# removes the run dir and the state file. Stopping when nothing runs is not an error.
set -euo pipefail

STATE_DIR="${STOWAGE_RGW_STATE_DIR:-/tmp/stowage-rgw}"
STATE_FILE="$STATE_DIR/state"

log() { echo "[rgw] $*" >&2; }

# start.sh holds the lock already when it calls this script to clean up.
if [ "${STOWAGE_RGW_LOCKED:-}" != "1" ] && [ -d "$STATE_DIR" ]; then
  exec 9>"$STATE_DIR/lock"
  flock 9
fi

if [ ! -f "$STATE_FILE" ]; then
  log "nothing to stop (no $STATE_FILE)"
  exit 0
fi

RUN_DIR="$(grep '^RUN_DIR=' "$STATE_FILE" | cut -d= -f2-)"
# Only ever delete a run dir this script family created.
case "$RUN_DIR" in
  /tmp/stowage-rgw-run.*) ;;
  *)
    log "refusing to clean up unexpected run dir '$RUN_DIR'"
    exit 1
    ;;
esac

# A pid is ours only while its command line names this run dir's ceph.conf; a pid reused by
# another process after our daemon died is left alone.
ours() {
  local pid="$1"
  [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$RUN_DIR/ceph.conf"
}

# radosgw first, the monitor last, so that no daemon waits on one that is already gone.
pids=()
for name in client.rgw mgr.x osd.0 mon.a; do
  pid_file="$RUN_DIR/$name.pid"
  [ -f "$pid_file" ] || continue
  pid="$(cat "$pid_file")"
  if [[ "$pid" =~ ^[0-9]+$ ]] && ours "$pid"; then pids+=("$pid"); fi
done

if [ "${#pids[@]}" -gt 0 ]; then
  log "stopping daemons ${pids[*]}"
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for _ in $(seq 1 50); do
    alive=()
    for pid in "${pids[@]}"; do if ours "$pid"; then alive+=("$pid"); fi; done
    [ "${#alive[@]}" -eq 0 ] && break
    sleep 0.2
  done
  for pid in "${pids[@]}"; do
    if ours "$pid"; then
      log "daemon $pid ignored SIGTERM; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
fi

rm -rf "$RUN_DIR"
rm -f "$STATE_FILE"
log "stopped and removed $RUN_DIR"
