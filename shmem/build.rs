//! Compiles the few lines of C the library needs (`long double`
//! arithmetic: no Rust type has its representation).
fn main() {
    println!("cargo:rerun-if-changed=src/ldouble.c");
    cc::Build::new()
        .file("src/ldouble.c")
        .compile("pgas_shmem_ldouble");
}
