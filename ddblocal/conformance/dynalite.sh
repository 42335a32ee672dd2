#!/usr/bin/env bash
# dynalite.sh — install, start and stop dynalite 4.0.0 (an independent
# DynamoDB implementation from npm) and run the conformance suite against it.
#
#   dynalite.sh install        npm install dynalite@4.0.0 into .cache/dynalite (idempotent)
#   dynalite.sh start PORT     start it in memory on 127.0.0.1:PORT in the background
#   dynalite.sh stop           stop the instance started by "start"
#   dynalite.sh run [ARGS...]  install, start, go test the suite against it, stop;
#                              exits with go test's exit code. ARGS go to go test.
#   dynalite.sh run-host [ARGS...]  like run, for the host's own DynamoDB client:
#                              the same calls through its wire path and the SDK's
#                              client (host/internal/store/dynamo's conformance cases)
#   dynalite.sh bench          like run, but runs BenchmarkDDB instead of the tests
#
# Environment: DYNALITE_DIR overrides the install directory, DYNALITE_PORT the
# port used by run/bench (default: a free port chosen by the script).
set -euo pipefail

VERSION=4.0.0
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
DIR="${DYNALITE_DIR:-$ROOT/.cache/dynalite}"
PIDFILE="$DIR/dynalite.pid"
LOGFILE="$DIR/dynalite.log"

log() { echo "dynalite.sh: $*" >&2; }

installed() {
  [ -f "$DIR/node_modules/dynalite/package.json" ] &&
    node -e 'process.exit(require(process.argv[1]).version === process.argv[2] ? 0 : 1)' \
      "$DIR/node_modules/dynalite/package.json" "$VERSION" 2>/dev/null
}

cmd_install() {
  command -v node >/dev/null || { log "node is not installed"; exit 1; }
  command -v npm >/dev/null || { log "npm is not installed"; exit 1; }
  if installed; then
    return 0
  fi
  mkdir -p "$DIR"
  [ -f "$DIR/package.json" ] || echo '{"name":"dynafold-dynalite","private":true}' >"$DIR/package.json"
  log "installing dynalite@$VERSION into $DIR"
  # The in-memory store (memory-level) is pure JavaScript; classic-level's
  # native LevelDB binding ships prebuilt inside its npm package, so nothing
  # is fetched from outside the npm registry.
  npm install --prefix "$DIR" --no-audit --no-fund --loglevel=error "dynalite@$VERSION" >&2
  installed || { log "install failed: dynalite@$VERSION not found in $DIR"; exit 1; }
}

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

cmd_start() {
  local port="${1:?usage: dynalite.sh start PORT}"
  installed || cmd_install
  if [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
    log "already running (pid $(cat "$PIDFILE")); stop it first"
    exit 1
  fi
  mkdir -p "$DIR"
  # No --path: dynalite keeps its tables in memory. Table state changes
  # (CREATING -> ACTIVE, ...) are made instant so tests need not wait.
  nohup node "$DIR/node_modules/dynalite/cli.js" --host 127.0.0.1 --port "$port" \
    --createTableMs 0 --deleteTableMs 0 --updateTableMs 0 >"$LOGFILE" 2>&1 </dev/null &
  echo $! >"$PIDFILE"
  local i
  for i in $(seq 1 100); do
    if ! kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
      log "dynalite exited during start:"; cat "$LOGFILE" >&2; rm -f "$PIDFILE"; exit 1
    fi
    # Any HTTP answer (dynalite answers 400 to an unsigned request) means it is up.
    if node -e '
      const r=require("http").request({host:"127.0.0.1",port:+process.argv[1],method:"POST",path:"/"},
        res=>process.exit(0));
      r.on("error",()=>process.exit(1)); r.end("{}")' "$port" 2>/dev/null; then
      log "listening on http://127.0.0.1:$port (pid $(cat "$PIDFILE"))"
      return 0
    fi
    sleep 0.1
  done
  log "dynalite did not answer on port $port within 10s"; cmd_stop; exit 1
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

with_dynalite() {
  cmd_install
  local port="${DYNALITE_PORT:-$(free_port)}"
  cmd_start "$port"
  trap cmd_stop EXIT
  local rc=0
  ( cd "$ROOT" && DDB_CONFORMANCE_ENDPOINT="http://127.0.0.1:$port" DDB_CONFORMANCE_TARGET=dynalite "$@" ) || rc=$?
  cmd_stop
  trap - EXIT
  return "$rc"
}

case "${1:-}" in
  install) cmd_install ;;
  start) shift; cmd_start "$@" ;;
  stop) cmd_stop ;;
  run) shift; with_dynalite go test ./ddblocal/conformance/ -run Conformance -count=1 "$@" ;;
  run-host) shift; with_dynalite go test ./host/internal/store/dynamo/ -run Conformance -count=1 "$@" ;;
  bench) shift; with_dynalite go test ./ddblocal/conformance/ -run '^$' -bench BenchmarkDDB -benchtime=2000x -count=1 "$@" ;;
  *) echo "usage: $0 install | start PORT | stop | run [go test args] | run-host [go test args] | bench [go test args]" >&2; exit 2 ;;
esac
