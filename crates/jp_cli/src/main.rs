//! The `jp` binary: everything it does is in the library.

fn main() -> std::process::ExitCode {
    jp_cli::main()
}
