# The functions every script `culprit collect --print-commands` writes carries (sourced into it
# verbatim; bash 3.2 and later: no associative arrays). The script defines B, M, FORMAT,
# TOOL_VERSION, PLATFORM, STEPS, TOTAL_CAP, TIMEOUT, ATTEMPTS, BACKOFF, QUOTA and total
# before them; analyzer/collect/script.py fills in how each tool says its version and the
# folder of the error outputs.
now() { date -u +%Y-%m-%dT%H:%M:%SZ; }
if command -v sha256sum >/dev/null 2>&1; then
  sha256() { sha256sum "$1" | cut -d' ' -f1; }
else
  sha256() { shasum -a 256 "$1" | cut -d' ' -f1; }
fi
if command -v timeout >/dev/null 2>&1; then LIMIT=(timeout "$TIMEOUT"); else LIMIT=(); fi
# Text for the record: printable, no quote or backslash, one line.
clean() {
  local text=${1//[$'\n\t']/ }
  text=${text//[\"\\]/}
  printf '%s' "${text:0:300}" | tr -d '\000-\037\177'
}
str() { if [ -n "$1" ]; then printf '"%s"' "$1"; else printf 'null'; fi; }
version() {
  local file="$M/partial/version-$1"
  if [ ! -f "$file" ]; then
    case "$1" in
__VERSIONS__
    esac 2>/dev/null | grep -m 1 . > "$file" || true
  fi
  clean "$(< "$file")"
}
pause() { sleep "$(awk -v b="$BACKOFF" -v n="$1" 'BEGIN { print b * 2 ^ (n - 1) }')"; }
# record ID STATUS EXIT START END ATTEMPTS BYTES SHA OUTPUT TOOL ERROR
record() {
  local error; error=$(clean "${11}")
  printf '{"id":"%s","status":"%s","exit_status":%s,"start":"%s","end":"%s","attempts":%s,"bytes":%s,"sha256":%s,"output":%s,"tool":"%s","version":"%s","error":%s,"stderr_file":"%s"}\n' \
    "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$(str "$8")" "$(str "$9")" "${10}" \
    "$(version "${10}")" "$(str "$error")" "__STDERR__/$1.txt" >> "$M/results.jsonl"
}
# done_already ID: its last result says its output is complete, and the file is unchanged.
done_already() {
  local line out sha
  line=$(grep -F "\"id\":\"$1\"," "$M/results.jsonl" 2>/dev/null | tail -n 1)
  case "$line" in *'"status":"ok"'*|*'"status":"truncated"'*) ;; *) return 1 ;; esac
  out=$(printf '%s' "$line" | sed -n 's/.*"output":"\([^"]*\)".*/\1/p')
  sha=$(printf '%s' "$line" | sed -n 's/.*"sha256":"\([0-9a-f]*\)".*/\1/p')
  [ -n "$out" ] && [ -f "$B/$out" ] && [ "$(sha256 "$B/$out")" = "$sha" ]
}
# run ID CAP OUTPUT TOOL -- COMMAND...: its standard output into OUTPUT, at most CAP bytes.
run() {
  local id=$1 cap=$2 out=$3 tool=$4
  shift 5
  if done_already "$id"; then echo "culprit-collect: $id: complete already" >&2; return 0; fi
  local start part err attempt=0 status bytes state error
  start=$(now); part="$M/partial/$id"; err="$M/stderr/$id.txt"
  if [ "$total" -ge "$TOTAL_CAP" ]; then
    record "$id" skipped null "$start" "$(now)" 0 0 "" "" "$tool" \
      "the total byte cap ($TOTAL_CAP bytes) is reached"
    return 0
  fi
  [ $((TOTAL_CAP - total)) -lt "$cap" ] && cap=$((TOTAL_CAP - total))
  echo "culprit-collect: $id" >&2
  while :; do
    attempt=$((attempt + 1))
    ${LIMIT[@]+"${LIMIT[@]}"} "$@" 2>"$err" | head -c "$cap" >"$part"
    status=${PIPESTATUS[0]}
    bytes=$(wc -c <"$part" | tr -d ' ')
    [ "$status" -eq 0 ] && break
    [ "$bytes" -ge "$cap" ] && break
    if [ "$attempt" -lt "$ATTEMPTS" ] && grep -Eqi "$QUOTA" "$err"; then pause "$attempt"; continue; fi
    break
  done
  if [ "$status" -eq 0 ] || [ "$bytes" -ge "$cap" ]; then
    mkdir -p "$(dirname "$B/$out")"
    mv "$part" "$B/$out"
    state=ok; error=""
    if [ "$status" -ne 0 ]; then state=truncated; error="cut at its byte cap ($cap bytes)"; fi
    total=$((total + bytes))
    record "$id" "$state" "$status" "$start" "$(now)" "$attempt" "$bytes" \
      "$(sha256 "$B/$out")" "$out" "$tool" "$error"
  else
    rm -f "$part"
    if [ "$status" -eq 124 ] && [ "${#LIMIT[@]}" -gt 0 ]; then
      error="ran out of time ($TIMEOUT s)"
    else
      error="exited with status $status: $(grep . "$err" | tail -n 1)"
    fi
    echo "culprit-collect: $id failed: $error" >&2
    record "$id" failed "$status" "$start" "$(now)" "$attempt" 0 "" "" "$tool" "$error"
  fi
}
# capture ID -- COMMAND...: print its standard output (a signed URL: never written down).
capture() {
  local err="$M/stderr/$1.capture.txt" attempt=0 value status
  shift 2
  while :; do
    attempt=$((attempt + 1))
    value=$(${LIMIT[@]+"${LIMIT[@]}"} "$@" 2>"$err")
    status=$?
    if [ "$status" -eq 0 ] && [ -n "$value" ]; then printf '%s' "$value"; return 0; fi
    if [ "$attempt" -lt "$ATTEMPTS" ] && grep -Eqi "$QUOTA" "$err"; then pause "$attempt"; continue; fi
    return 1
  done
}
# failed_capture ID TOOL WHAT: the command giving ID's argument failed.
failed_capture() {
  local when; when=$(now)
  echo "culprit-collect: $1 failed: $3" >&2
  record "$1" failed null "$when" "$when" 0 0 "" "" "$2" \
    "its argument from $3 failed: $(grep . "$M/stderr/$1.capture.txt" | tail -n 1)"
}
# named FOLDER URL FALLBACK: FOLDER/<the URL's file name> when it is a plain *.log name.
named() {
  local name=${2%%\?*}
  name=${name##*/}
  case "$name" in
    *[!A-Za-z0-9._-]*|''|[._-]*) echo "$3" ;;
    *.log) echo "$1/$name" ;;
    *) echo "$3" ;;
  esac
}
# manifest COMPLETE: manifest.json from the last result of every command.
manifest() {
  local ran failed members
  ran=$(awk 'match($0, /"id":"[^"]*"/) { id = substr($0, RSTART + 6, RLENGTH - 7); if (!(id in s)) { s[id] = 1; n++ } } END { print n + 0 }' "$M/results.jsonl" 2>/dev/null || echo 0)
  failed=$(awk 'match($0, /"id":"[^"]*"/) { id = substr($0, RSTART + 6, RLENGTH - 7); last[id] = $0; if (!(id in s)) { s[id] = 1; o[++n] = id } }
    END { sep = ""; for (i = 1; i <= n; i++) if (last[o[i]] !~ /"status":"(ok|truncated)"/) { printf "%s\"%s\"", sep, o[i]; sep = "," } }' "$M/results.jsonl" 2>/dev/null)
  members=$(awk 'match($0, /"id":"[^"]*"/) { id = substr($0, RSTART + 6, RLENGTH - 7); last[id] = $0 }
    END { for (id in last) { l = last[id]; if (l !~ /"status":"(ok|truncated)"/) continue;
      o = l; sub(/.*"output":"/, "", o); sub(/".*/, "", o);
      h = l; sub(/.*"sha256":"/, "", h); sub(/".*/, "", h);
      b = l; sub(/.*"bytes":/, "", b); sub(/[,}].*/, "", b);
      printf "%s\t{\"bytes\":%s,\"sha256\":\"%s\"}\n", o, b, h } }' "$M/results.jsonl" 2>/dev/null \
    | LC_ALL=C sort | awk -F '\t' 'BEGIN { sep = "" } { printf "%s\"%s\":%s", sep, $1, $2; sep = "," }')
  [ "$1" = true ] && [ "$ran" -ne "$STEPS" ] && set -- false
  printf '{"format":"%s","tool_version":"%s","platform":"%s","written":"%s","complete":%s,"commands":%s,"failed":[%s],"members":{%s}}\n' \
    "$FORMAT" "$TOOL_VERSION" "$PLATFORM" "$(now)" "$1" "$STEPS" "$failed" "$members" > "$M/manifest.json.tmp"
  mv "$M/manifest.json.tmp" "$M/manifest.json"
}
interrupted() {
  rm -rf "$M/partial"
  manifest false
  echo "culprit-collect: interrupted; the bundle holds what was complete (run again to resume)" >&2
  exit 130
}
trap interrupted INT TERM
