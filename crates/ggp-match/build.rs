//! Builds again when a migration file is added (refinery's `embed_migrations!` reads the
//! directory when it is compiled; files it read are tracked already, new ones are not).

fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
