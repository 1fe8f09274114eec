#!/usr/bin/env bash
# The hot paths of two commits, side by side: `benches/ab.sh OLD [NEW]` (NEW: HEAD).
#
# Each commit is built in a folder of its own (`git worktree`, release, its own target
# folder; kept under AB_DIR, so a second run reuses it), one data folder is prepared with
# the old binary (12 tasks x AB_CLIPS clips sharing one video, 12 validators, an admin),
# and the two servers are run alternately on fresh copies of it, AB_PAIRS pairs (old
# first in odd pairs, new first in even ones). Each run measures, with wrk:
#   next      GET  /api/v1/campaigns/default/queue/1, 1 and 32 connections
#   page      GET  /c/default/review/1/CLIP (a signed-in browser's review page), 8 connections
#   clip      GET  the clip's media URL, 64 KiB ranges through that browser session, 32
#   verdicts  POST .../items/1/CLIP/verdict, one new verdict a request, 32 and 1
# and, around each load, the server's CPU time (user + system, /proc/PID/stat) over the
# requests it answered, and its SQL statements a request (`/metrics`). It prints each
# path's rate and CPU a request new/old: geometric mean, median and range over the pairs.
# AB_COUNT=1 also counts instructions a request under callgrind (valgrind): the next item
# and a verdict at one connection, once per binary; a change of a few percent shows there
# when the rates' spread on a shared machine hides it.
#
# Needs git, cargo, wrk, curl; valgrind for AB_COUNT. Every server is started and
# stopped here by its PID, on 127.0.0.1 only; every load is bounded by AB_SECONDS.
set -euo pipefail

OLD=${1:?usage: benches/ab.sh OLD_REF [NEW_REF]}
NEW=${2:-HEAD}
PAIRS=${AB_PAIRS:-3}
CLIPS=${AB_CLIPS:-4000}
SECS=${AB_SECONDS:-5}
ROOT=$(git rev-parse --show-toplevel)
DIR=${AB_DIR:-$ROOT/target/ab}
mkdir -p "$DIR/bin"
for tool in wrk curl; do
  command -v $tool >/dev/null || { echo "benches/ab.sh needs $tool (apt install $tool)" >&2; exit 2; }
done

# The release binary of a commit, built once in a worktree and target folder of its own.
binary() {
  local sha; sha=$(git -C "$ROOT" rev-parse --verify "$1^{commit}")
  local bin="$DIR/bin/tandem-${sha:0:12}"
  if [ ! -x "$bin" ]; then
    local src="$DIR/src-${sha:0:12}"
    rm -rf "$src"; git -C "$ROOT" worktree prune
    git -C "$ROOT" worktree add --detach -q "$src" "$sha"
    # A first build starts from a copy of the newest target folder: the dependencies
    # are reused, only the crate itself is built again.
    local newest; newest=$(ls -dt "$DIR"/target-* 2>/dev/null | head -1 || true)
    if [ ! -d "$DIR/target-${sha:0:12}" ] && [ -n "$newest" ]; then cp -a "$newest" "$DIR/target-${sha:0:12}"; fi
    echo "building $1 (${sha:0:12}) in $DIR/target-${sha:0:12}" >&2
    (cd "$src" && CARGO_TARGET_DIR="$DIR/target-${sha:0:12}" cargo build --release -q)
    cp "$DIR/target-${sha:0:12}/release/tandem" "$bin"
    git -C "$ROOT" worktree remove --force "$src"
  fi
  echo "$bin"
}
A=$(binary "$OLD"); B=$(binary "$NEW")

port() { # a free port: bind 0 and read back what the kernel gave
  local p
  for p in $(shuf -i 20000-60000 -n 20); do
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
  echo "no free port" >&2; exit 1
}
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
TCK=$(getconf CLK_TCK)

# One data folder, made by the old binary (the new one reads it as it reads any older).
BASE="$DIR/base-$(basename "$A")-$CLIPS"
if [ ! -f "$BASE/ready" ]; then
  rm -rf "$BASE"; mkdir -p "$BASE/src/videos"
  cp "$ROOT/tests/data/tiny.mp4" "$BASE/src/videos/one.mp4"
  TASKS="MC_F_EGO_STA QC_F_EGO_DYN CI_F_EXO_STA CM_F_EXO_DYN DE_V_EGO_STA IO_V_EGO_DYN HO_V_EXO_STA VI_V_EXO_DYN DS_E_EGO_STA RV_E_EGO_DYN LS_E_EXO_STA BT_E_EXO_DYN"
  for t in $TASKS; do
    awk -v t="$t" -v n="$CLIPS" 'BEGIN { for (i = 0; i < n; i++) printf "{\"clip_id\":\"%s_%05d\",\"task\":\"%s\",\"file\":\"videos/one.mp4\",\"theme\":\"ab\",\"generator\":\"ab\",\"questions\":[]}\n", t, i, t }'
  done >"$BASE/src/manifest.jsonl"
  D="$BASE/data"
  PW=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
  echo "$PW" >"$BASE/password"
  for v in $(seq 0 11); do
    printf '%s\n' "$PW" | "$A" --data-dir "$D" user add "$(printf 'val%02d' "$v")" --role validator --index "$v" --password-stdin >/dev/null
  done
  printf '%s\n' "$PW" | "$A" --data-dir "$D" user add abadmin --role admin --password-stdin >/dev/null
  "$A" --data-dir "$D" import "$BASE/src/manifest.jsonl" >/dev/null
  token() { "$A" --data-dir "$D" token create "$1" 2>/dev/null | grep -Eo 'tdm_[A-Za-z0-9_-]+' | tail -1; }
  : >"$BASE/tokens"
  for v in $(seq 0 11); do echo "$v $(token "$(printf 'val%02d' "$v")")" >>"$BASE/tokens"; done
  echo "admin $(token abadmin)" >>"$BASE/tokens"
  # Validator v reviews tasks v-1 and v (task t: validators t and t+1 mod 12); the
  # list interleaves the validators, every line a verdict not sent before.
  awk -v n="$CLIPS" -v tasks="$TASKS" '
    NR == FNR { tok[$1] = $2; next }
    END {
      k = split(tasks, t, " ")
      for (i = 0; i < 2 * n; i++)
        for (v = 0; v < 12; v++) {
          task = (i < n) ? (v + 11) % 12 : v
          printf "%s /api/v1/campaigns/default/items/1/%s_%05d/verdict\n", tok[v], t[task + 1], i % n
        }
    }' "$BASE/tokens" /dev/null >"$BASE/verdicts"
  local_lines=$(wc -l <"$BASE/verdicts"); one=$((local_lines / 4))
  head -n $((local_lines - one)) "$BASE/verdicts" >"$BASE/verdicts32"
  tail -n "$one" "$BASE/verdicts" >"$BASE/verdicts1"
  touch "$BASE/ready"
fi
tok() { awk -v k="$1" '$1 == k { print $2 }' "$BASE/tokens"; }

LOG="$DIR/ab-$(date -u +%Y%m%dT%H%M%S).log"
# One run of one binary: prints "NAME PATH CONNS rate cpu_us statements" lines.
run() {
  local name=$1 bin=$2 D="$DIR/run"
  rm -rf "$D"; cp -a "$BASE/data" "$D"
  local p; p=$(port)
  "$bin" --data-dir "$D" serve --bind "127.0.0.1:$p" >"$DIR/serve.log" 2>&1 &
  local pid=$! url="http://127.0.0.1:$p"
  # The new binary brings the old folder's schema up to date first.
  for _ in $(seq 1200); do curl -fs "$url/healthz" >/dev/null && break; sleep 0.1; done
  curl -fs "$url/healthz" >/dev/null || { echo "$name did not start: $DIR/serve.log" >&2; exit 1; }
  sleep 0.5
  local rss0; rss0=$(ps -o rss= -p $pid)
  local v3 admin; v3=$(tok 3); admin=$(tok admin)
  # A browser session of val03 (task 3's first clip is in its queue), and the clip's URL.
  local jar="$DIR/jar" csrf clip="CM_F_EXO_DYN_00000"
  rm -f "$jar"
  csrf=$(curl -fs -c "$jar" -b "$jar" "$url/login" | grep -o 'name="_csrf" value="[^"]*"' | sed 's/.*value="//; s/"$//')
  curl -fs -o /dev/null -c "$jar" -b "$jar" --data-urlencode "_csrf=$csrf" --data-urlencode "name=val03" \
    --data-urlencode "password=$(cat "$BASE/password")" --data-urlencode "next=/" "$url/login"
  local cookie; cookie=$(sed 's/^#HttpOnly_//' "$jar" | awk '!/^#/ && NF >= 7 { printf "%s%s=%s", sep, $6, $7; sep = "; " }')
  local media; media=$(curl -fs -H "Cookie: $cookie" "$url/c/default/review/1/$clip" | grep -o '/media/[^"]*' | head -1 | sed 's/&amp;/\&/g')
  [ -n "$media" ] || { echo "no clip URL on the review page" >&2; kill $pid; exit 1; }
  load() { # PATH CONNS wrk-arguments...
    local path=$1 c=$2; shift 2
    local th=2; [ "$c" -lt 2 ] && th=1
    local c0 c1 out; c0=$(cpu $pid)
    out=$(wrk -t$th -c"$c" -d"${SECS}s" --timeout 30s "$@" 2>&1)
    c1=$(cpu $pid)
    echo "$out" | awk -v n="$name" -v p="$path" -v c="$c" -v cpu=$((c1 - c0)) -v tck="$TCK" -v limit="${AB_LIMIT:-0}" '
      /Requests\/sec/ { r = $2 } /requests in/ { req = $1 } /Non-2xx/ { bad = $NF }
      END {
        if (limit > 0 && req >= limit) printf "WARNING: %s %s %s used up its %d verdicts: raise AB_CLIPS\n", n, p, c, limit > "/dev/stderr"
        printf "%s %s %s %.1f %.2f %d\n", n, p, c, r, cpu * 1e6 / tck / req, bad
      }'
  }
  load next 1 -H "Authorization: Bearer $v3" "$url/api/v1/campaigns/default/queue/1"
  load next 32 -H "Authorization: Bearer $v3" "$url/api/v1/campaigns/default/queue/1"
  load page 8 -H "Cookie: $cookie" "$url/c/default/review/1/$clip"
  load clip 32 -H "Cookie: $cookie" -H "Range: bytes=0-65535" "$url$media"
  AB_LIMIT=$(wc -l <"$BASE/verdicts32") AB_LIST="$BASE/verdicts32" AB_THREADS=2 load verdicts 32 -s "$ROOT/benches/ab/verdict.lua" "$url"
  local rss1; rss1=$(ps -o rss= -p $pid)
  AB_LIMIT=$(wc -l <"$BASE/verdicts1") AB_LIST="$BASE/verdicts1" AB_THREADS=1 load verdicts 1 -s "$ROOT/benches/ab/verdict.lua" "$url"
  echo "$name memory 0 $rss0 $rss1 0"
  # Statements a request, per route, from the server's own counts.
  curl -fs -H "Authorization: Bearer $admin" "$url/metrics" |
    awk -v n="$name" '/^tandem_request_statements_(sum|count)\{/ {
        match($0, /route="[^"]*"/); r = substr($0, RSTART + 7, RLENGTH - 8)
        m = ($1 ~ /_sum/) ? "sum" : "count"; v[r, m] = $NF; routes[r] = 1 }
      END { for (r in routes) if (v[r, "count"] > 0) printf "%s statements %s %.2f\n", n, r, v[r, "sum"] / v[r, "count"] }'
  kill $pid; wait $pid 2>/dev/null || true
}

echo "old $OLD: $A" | tee "$LOG"; echo "new $NEW: $B" | tee -a "$LOG"
for i in $(seq "$PAIRS"); do
  echo "== pair $i $(date -u +%H:%M:%S)" >&2
  if [ $((i % 2)) -eq 1 ]; then run old "$A"; run new "$B"; else run new "$B"; run old "$A"; fi >>"$LOG"
done

if [ "${AB_COUNT:-}" = 1 ]; then
  command -v valgrind >/dev/null || { echo "AB_COUNT=1 needs valgrind" >&2; exit 2; }
  count() { # NAME BIN: instructions a request under callgrind, after a warm-up
    local name=$1 bin=$2 D="$DIR/run"
    for what in next verdict; do
      rm -rf "$D"; cp -a "$BASE/data" "$D"
      local p; p=$(port); local url="http://127.0.0.1:$p" out="$DIR/callgrind.$name.$what"
      rm -f "$out"*
      valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" --data-dir "$D" serve --bind "127.0.0.1:$p" >/dev/null 2>&1 &
      local pid=$!
      for _ in $(seq 600); do curl -fs "$url/healthz" >/dev/null && break; sleep 0.2; done
      local args
      if [ $what = next ]; then args=(-H "Authorization: Bearer $(tok 3)" "$url/api/v1/campaigns/default/queue/1")
      else args=(-s "$ROOT/benches/ab/verdict.lua" "$url"); fi
      AB_LIST="$BASE/verdicts32" AB_THREADS=1 wrk -t1 -c1 -d5s --timeout 30s "${args[@]}" >/dev/null 2>&1
      callgrind_control -z $pid >/dev/null 2>&1
      local req
      req=$(AB_LIST="$BASE/verdicts1" AB_THREADS=1 wrk -t1 -c1 -d10s --timeout 30s "${args[@]}" 2>&1 | awk '/requests in/ { print $1 }')
      callgrind_control -d $pid >/dev/null 2>&1; sleep 1
      local ir; ir=$(callgrind_annotate "$(ls -t "$out"* | head -1)" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
      echo "$name count $what 1 $((ir / req)) 0"
      kill $pid; wait $pid 2>/dev/null || true
    done
  }
  { count old "$A"; count new "$B"; } >>"$LOG"
fi

# Ratios new/old per path: geometric mean, median and range over the pairs.
awk '
  $2 == "statements" { s[$1, $3] = $4; routes[$3] = 1; next }
  $2 == "count" { ir[$1, $3] = $5; counted[$3] = 1; next }
  $2 == "memory" { idle[$1] = idle[$1] " " $4; busy[$1] = busy[$1] " " $5; next }
  NF == 6 && ($1 == "old" || $1 == "new") {
    k = $2 " " $3; keys[k] = 1; n[$1, k]++
    rate[$1, k, n[$1, k]] = $4; cpu[$1, k, n[$1, k]] = $5; bad[$1 " " k] += $6
  }
  function sort(a, m,   i, j, t) { for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t } }
  function show(label, x, m,   i, g, lo, hi) {
    g = 0; lo = x[1]; hi = x[1]
    for (i = 1; i <= m; i++) { g += log(x[i]); if (x[i] < lo) lo = x[i]; if (x[i] > hi) hi = x[i] }
    sort(x, m)
    return sprintf("%.3fx (median %.3f, %.2f-%.2f)", exp(g / m), (m % 2) ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2, lo, hi)
  }
  END {
    printf "| path, connections | rate new/old | CPU a request new/old | CPU µs a request old / new |\n| --- | ---: | ---: | ---: |\n"
    split("next 1,next 32,page 8,clip 32,verdicts 32,verdicts 1", order, ",")
    for (o = 1; o in order; o++) {
      k = order[o]
      if (!(k in keys)) continue
      m = n["old", k] < n["new", k] ? n["old", k] : n["new", k]
      co = 0; cn = 0
      for (i = 1; i <= m; i++) { r[i] = rate["new", k, i] / rate["old", k, i]; c[i] = cpu["new", k, i] / cpu["old", k, i]; co += cpu["old", k, i]; cn += cpu["new", k, i] }
      printf "| %s | %s | %s | %.1f / %.1f |\n", k, show("rate", r, m), show("cpu", c, m), co / m, cn / m
    }
    for (b in bad) if (bad[b] > 0) printf "WARNING: %s answered %d requests with a status other than 2xx\n", b, bad[b]
    for (w in counted) printf "instructions a request, %s at one connection: old %d, new %d (%.3fx)\n", w, ir["old", w], ir["new", w], ir["new", w] / ir["old", w]
    for (w in routes) if (w !~ /login|healthz|metrics/) printf "statements a request, %s: old %s, new %s\n", w, s["old", w], s["new", w]
    printf "resident memory (KiB, each start) old idle%s, load%s; new idle%s, load%s\n", idle["old"], busy["old"], idle["new"], busy["new"]
  }' "$LOG" | tee -a "$LOG.summary"
echo "(each run: $LOG)"
