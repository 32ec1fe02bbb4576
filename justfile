# Common tasks. `just --list` shows them.

# Everything CI checks.
ci:
    bash .ci/run

# The whole test suite (the README's test command).
test:
    cargo test --workspace

# The argument-parser benchmark table (JP_BENCH_QUICK=1 for a smoke run).
bench:
    cargo bench -p jp_conversation

# Peak resident memory of `jp query` for one large tool call (Linux).
bench-query-memory:
    cargo bench -p jp_cli --bench query_memory

# What drawing the assistant's text as markdown costs per line and chunk.
bench-markdown:
    cargo bench -p jp_cli --bench markdown

# fs_grep against rg on this repository and a generated tree (needs rg).
bench-grep:
    cargo bench -p jp_tools --bench grep

# Fuzz the argument parser against serde_json (needs nightly and cargo-fuzz).
fuzz seconds="60":
    cd fuzz && cargo +nightly fuzz run arg_parser -- -max_total_time={{seconds}}

# Install jp from this checkout.
install:
    cargo install --locked --path crates/jp_cli

# How long a streamed tool-call argument takes to reach the screen (tmux).
latency:
    cargo test -p jp_cli --test query_terminal argument_latency -- --ignored --nocapture

# The code's shape: long files and functions, import circles (issue 22's measures).
shape:
    python3 scripts/shape.py --list

# The delay from Enter to the request leaving, in `jp chat` and `jp query` (needs tmux).
bench-chat-latency:
    cargo bench -p jp_cli --bench chat_latency
