use std::process::ExitCode;

fn main() -> ExitCode {
    tandem::cli::main()
}
