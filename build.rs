// The migrations are embedded by `sqlx::migrate!`: rebuild when one is added or
// changed, not only when a Rust file is.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
