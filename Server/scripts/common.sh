# Helpers shared by Server/scripts/throughput and Server/scripts/crash (sourced, not run).
# Expects: $engine (sqlite|postgres), $work (a scratch folder), $bin (the binaries), $admin
# (an admin key for the servers it starts), and a pids array.

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

database() {  # a fresh database named $1
  if [ "$engine" = sqlite ]; then echo "sqlite:$work/$1.sqlite"; return; fi
  local base=${LINKRELAY_TEST_POSTGRES:?postgres needs LINKRELAY_TEST_POSTGRES (run under Server/scripts/with-postgres)}
  psql "$base" -q -c "CREATE DATABASE $1" > /dev/null
  echo "${base%/*}/$1"
}

sql() {  # database, query: the rows, one per line, columns separated by |
  if [ "$engine" = sqlite ]; then
    python3 - "${1#sqlite:}" "$2" <<'PY'
import sqlite3, sys
for row in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]): print("|".join(str(value) for value in row))
PY
  else
    psql "$1" -At -c "$2"
  fi
}

wait_for() {  # a log file, the line that says it is up
  for _ in $(seq 1 300); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  cat "$1" >&2; return 1
}

serve() {  # database, port, log: a server in the background, its pid last in pids
  # The load comes from a few addresses at thousands of clicks a second: no per-address limit,
  # so every 302 has its stored click to check.
  LINKRELAY_ADMIN_KEY=$admin "$bin/linkrelay-server" serve --database "$1" --port "$2" --trust-proxy --clicks-per-address 0 \
    ${serve_options[@]+"${serve_options[@]}"} >> "$3" 2>&1 &
  pids+=($!)
  wait_for "$3" "LinkRelay Server listening on"
}

stop_last() { local pid=${pids[-1]}; kill -TERM "$pid"; wait "$pid" || true; unset 'pids[-1]'; }

count() { "$bin/linkrelay-server" stats --database "$1" --json | python3 -c "import json, sys; print(json.load(sys.stdin)['$2'])"; }

verdict() {  # condition (a python expression), text: "met: text" or "MISSED: text"
  if python3 -c "import sys; sys.exit(0 if ($1) else 1)"; then echo "met: $2"; else echo "MISSED: $2"; fi
}
