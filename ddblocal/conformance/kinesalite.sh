#!/usr/bin/env bash
# kinesalite.sh — install, start and stop kinesalite 3.3.3 (an independent
# Kinesis implementation from npm) and run the Kinesis conformance suite
# (ddblocal/conformance/kinesisconf) against it.
#
#   kinesalite.sh install        npm install kinesalite@3.3.3 into .cache/kinesalite (idempotent)
#   kinesalite.sh start PORT     start it in memory on 127.0.0.1:PORT in the background
#   kinesalite.sh stop           stop the instance started by "start"
#   kinesalite.sh run [ARGS...]  install, start, go test the suite against it (and
#                                host run's Kinesis reader's kinesalite test), stop;
#                                exits with go test's exit code. ARGS go to go test.
#
# kinesalite is started from its module API bound to 127.0.0.1 (its CLI
# listens on every interface), with streams ACTIVE at once (createStreamMs,
# deleteStreamMs and updateStreamMs 0) and a shard limit the suite cannot
# reach. Environment: KINESALITE_DIR overrides the install directory,
# KINESALITE_PORT the port used by run (default: a free port).
set -euo pipefail

VERSION=3.3.3
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
DIR="${KINESALITE_DIR:-$ROOT/.cache/kinesalite}"
PIDFILE="$DIR/kinesalite.pid"
LOGFILE="$DIR/kinesalite.log"

log() { echo "kinesalite.sh: $*" >&2; }

installed() {
  [ -f "$DIR/node_modules/kinesalite/package.json" ] &&
    node -e 'process.exit(require(process.argv[1]).version === process.argv[2] ? 0 : 1)' \
      "$DIR/node_modules/kinesalite/package.json" "$VERSION" 2>/dev/null
}

cmd_install() {
  command -v node >/dev/null || { log "node is not installed"; exit 1; }
  command -v npm >/dev/null || { log "npm is not installed"; exit 1; }
  if installed; then
    return 0
  fi
  mkdir -p "$DIR"
  [ -f "$DIR/package.json" ] || echo '{"name":"dynafold-kinesalite","private":true}' >"$DIR/package.json"
  log "installing kinesalite@$VERSION into $DIR"
  # Without its optional LevelDB binding (leveldown, native): the suite
  # runs kinesalite in memory (memdown, pure JavaScript), so nothing is
  # built or fetched from outside the npm registry.
  npm install --prefix "$DIR" --no-audit --no-fund --loglevel=error --omit=optional "kinesalite@$VERSION" >&2
  installed || { log "install failed: kinesalite@$VERSION not found in $DIR"; exit 1; }
}

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

cmd_start() {
  local port="${1:?usage: kinesalite.sh start PORT}"
  installed || cmd_install
  if [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
    log "already running (pid $(cat "$PIDFILE")); stop it first"
    exit 1
  fi
  mkdir -p "$DIR"
  nohup node -e '
    const kinesalite = require(process.argv[1] + "/node_modules/kinesalite")
    const server = kinesalite({createStreamMs: 0, deleteStreamMs: 0, updateStreamMs: 0, shardLimit: 100000})
    server.listen(+process.argv[2], "127.0.0.1", err => {
      if (err) { console.error(err); process.exit(1) }
      console.log("kinesalite listening on 127.0.0.1:" + process.argv[2])
    })' "$DIR" "$port" >"$LOGFILE" 2>&1 </dev/null &
  echo $! >"$PIDFILE"
  local i
  for i in $(seq 1 100); do
    if ! kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
      log "kinesalite exited during start:"; cat "$LOGFILE" >&2; rm -f "$PIDFILE"; exit 1
    fi
    # Any HTTP answer (kinesalite answers 403 to an unsigned request) means it is up.
    if node -e '
      const r=require("http").request({host:"127.0.0.1",port:+process.argv[1],method:"POST",path:"/"},
        res=>process.exit(0));
      r.on("error",()=>process.exit(1)); r.end("{}")' "$port" 2>/dev/null; then
      log "listening on http://127.0.0.1:$port (pid $(cat "$PIDFILE"))"
      return 0
    fi
    sleep 0.1
  done
  log "kinesalite did not answer on port $port within 10s"; cmd_stop; exit 1
}

cmd_stop() {
  [ -f "$PIDFILE" ] || return 0
  local pid; pid="$(cat "$PIDFILE")"
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$PIDFILE"
}

with_kinesalite() {
  cmd_install
  local port="${KINESALITE_PORT:-$(free_port)}"
  cmd_start "$port"
  trap cmd_stop EXIT
  local rc=0
  ( cd "$ROOT" && KINESIS_CONFORMANCE_ENDPOINT="http://127.0.0.1:$port" KINESIS_CONFORMANCE_TARGET=kinesalite "$@" ) || rc=$?
  cmd_stop
  trap - EXIT
  return "$rc"
}

case "${1:-}" in
  install) cmd_install ;;
  start) shift; cmd_start "$@" ;;
  stop) cmd_stop ;;
  run) shift; with_kinesalite go test ./ddblocal/conformance/kinesisconf/ ./host/internal/kfeed/ \
    -run 'Conformance|TestK2_ReaderFindsDrainedShardsChildrenByListing' -count=1 "$@" ;;
  *) echo "usage: $0 install | start PORT | stop | run [go test args]" >&2; exit 2 ;;
esac
