#!/bin/sh
# cargo check / clippy / test as a jp tool (docs/tool-protocol.md): reads
# the request on stdin, runs cargo in the workspace root, and answers one
# outcome on stdout with the end of cargo's output. Usage: cargo.sh check |
# clippy | test.
set -u
request=$(cat)

# The one argument, `crate` (cargo_test only): a crate name or nothing.
crate=$(printf '%s' "$request" | sed -n 's/.*"crate":"\([^"]*\)".*/\1/p')
case "$crate" in
    '') package="--workspace" ;;
    jp_*) case "$crate" in *[!a-z_]*) crate=bad ;; esac
          package="-p $crate" ;;
    *) crate=bad ;;
esac

# JSON string contents: backslashes and quotes escaped, tabs and newlines
# written out, other control characters dropped.
json_text() {
    tr -d '\000-\010\013-\037' | awk 'BEGIN { ORS = "" }
        { gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); gsub(/\t/, "\\t");
          if (NR > 1) print "\\n"; print }'
}

outcome() { # type, text
    if [ "$1" = success ]; then
        printf '{"type":"success","content":"%s"}\n' "$(printf '%s' "$2" | json_text)"
    else
        printf '{"type":"error","message":"%s"}\n' "$(printf '%s' "$2" | json_text)"
    fi
}

if [ "$crate" = bad ]; then
    outcome error "\`crate\` must be one of this workspace's crates, such as jp_config"
    exit 0
fi

export CARGO_TERM_COLOR=never
case "${1:-}" in
    check) out=$(cargo check --workspace --all-targets 2>&1) ;;
    clippy) out=$(cargo clippy --workspace --all-targets -- -D warnings 2>&1) ;;
    test) out=$(cargo test $package 2>&1) ;;
    *) outcome error "unknown cargo command: ${1:-none}"; exit 0 ;;
esac
status=$?
# The end is where the errors and the summary are.
tail=$(printf '%s\n' "$out" | tail -n 150)
if [ "$status" = 0 ]; then
    outcome success "cargo $1 passed.
$tail"
else
    outcome error "cargo $1 failed (exit $status):
$tail"
fi
