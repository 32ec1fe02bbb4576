#!/usr/bin/env bash
# Installs the published MCP servers that tests/mcp_published_servers.rs
# starts unmodified (issue 37), at the versions pinned beside this script,
# under TARGET/mcp-servers (not globally, not in the source tree). A second
# run with the same pins does nothing.
#
#   npm/  the npm servers, from package-lock.json (exact versions and
#         integrity hashes; no install scripts: none of them needs one)
#   mcp2/ a venv with the PyPI servers on mcp 2.x
#   mcp1/ a venv with those that import mcp.server.fastmcp, which mcp 2.x
#         removed although their metadata allows it: they pin mcp 1.30.0
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
MCP_DIR="${1:?usage: install.sh DIR}"
mkdir -p "$MCP_DIR"

# mcp-server-git runs the git binary; `python3 -m venv` needs ensurepip.
if ! command -v git >/dev/null 2>&1 || ! python3 -c 'import ensurepip' 2>/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq git python3-venv >/dev/null
  else
    sudo apt-get update -qq && sudo apt-get install -y -qq git python3-venv >/dev/null
  fi
fi

if ! cmp -s "$HERE/package-lock.json" "$MCP_DIR/npm/package-lock.json" 2>/dev/null; then
  echo "== installing the npm MCP servers into $MCP_DIR/npm"
  rm -rf "$MCP_DIR/npm" && mkdir -p "$MCP_DIR/npm"
  cp "$HERE/package.json" "$HERE/package-lock.json" "$MCP_DIR/npm/"
  npm ci --prefix "$MCP_DIR/npm" --ignore-scripts --no-audit --no-fund >/dev/null
fi

for venv in mcp2 mcp1; do
  lock="$HERE/requirements-$venv.lock.txt"
  if ! cmp -s "$lock" "$MCP_DIR/$venv/lock.txt" 2>/dev/null; then
    echo "== installing the PyPI MCP servers of $lock into $MCP_DIR/$venv"
    rm -rf "${MCP_DIR:?}/$venv"
    python3 -m venv "$MCP_DIR/$venv"
    "$MCP_DIR/$venv/bin/pip" install -q --disable-pip-version-check -r "$lock"
    cp "$lock" "$MCP_DIR/$venv/lock.txt"
  fi
done
