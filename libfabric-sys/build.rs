//! Generates bindings against the libfabric installed on this machine.
//!
//! libfabric's data-path calls (`fi_write`, `fi_cq_read`, ...) are `static inline`
//! functions in its headers, which have no symbol in the shared library.
//! bindgen's `wrap_static_fns` emits a C file with one exported wrapper per
//! inline function; we compile it with `cc` and link it next to `-lfabric`.

use std::env;
use std::path::PathBuf;

const MIN_VERSION: &str = "1.17";

fn setup_hint() -> &'static str {
    "run `scripts/setup` from the pgas-comm checkout (it installs libfabric-dev, \
     libfabric-bin, libclang-dev and pkg-config on Debian/Ubuntu)"
}

/// libfabric's flag macros (`FI_MSG`, `FI_ORDER_RAW`, `FI_DELIVERY_COMPLETE`,
/// ...) are 64-bit masks; bindgen would give the small ones `u32`. Error codes
/// (`FI_EAGAIN`, ...) are C `int`s.
#[derive(Debug)]
struct MacroTypes;

impl bindgen::callbacks::ParseCallbacks for MacroTypes {
    fn int_macro(&self, name: &str, _value: i64) -> Option<bindgen::callbacks::IntKind> {
        use bindgen::callbacks::IntKind;
        let is_errno = (name.starts_with("FI_E") && name != "FI_EVENT") || name == "FI_SUCCESS";
        if !name.starts_with("FI_") {
            None
        } else if is_errno {
            Some(IntKind::I32)
        } else {
            Some(IntKind::U64)
        }
    }
}

fn main() {
    println!("cargo:rerun-if-changed=wrapper.h");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");

    let lib = match pkg_config::Config::new()
        .atleast_version(MIN_VERSION)
        .probe("libfabric")
    {
        Ok(lib) => lib,
        Err(e) => {
            eprintln!(
                "\nerror: libfabric >= {MIN_VERSION} was not found through pkg-config ({e}).\n\
                 To fix: {}.\n",
                setup_hint()
            );
            panic!(
                "libfabric >= {MIN_VERSION} not found via pkg-config: {}",
                setup_hint()
            );
        }
    };

    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR is set by cargo"));
    let wrappers = out.join("static_wrappers");

    let mut builder = bindgen::Builder::default()
        .header("wrapper.h")
        .allowlist_function("fi_.*")
        .blocklist_function("fi_version")
        .allowlist_type("fi_.*|fid.*")
        .allowlist_var("FI_.*")
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .derive_default(true)
        .derive_debug(true)
        .layout_tests(false)
        .wrap_static_fns(true)
        .wrap_static_fns_path(&wrappers)
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()))
        .parse_callbacks(Box::new(MacroTypes));
    for path in &lib.include_paths {
        builder = builder.clang_arg(format!("-I{}", path.display()));
    }

    // bindgen panics when libclang cannot be loaded; turn that into advice.
    let generated =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || builder.generate()));
    let bindings = match generated {
        Ok(Ok(b)) => b,
        Ok(Err(e)) => panic!("bindgen failed on libfabric headers: {e}"),
        Err(_) => panic!(
            "bindgen could not run (is libclang installed?): {}",
            setup_hint()
        ),
    };
    bindings
        .write_to_file(out.join("bindings.rs"))
        .expect("write bindings.rs");

    let mut cc = cc::Build::new();
    cc.file(wrappers.with_extension("c"))
        .include(env::current_dir().expect("cwd"))
        .warnings(false);
    for path in &lib.include_paths {
        cc.include(path);
    }
    cc.compile("fabric_static_wrappers");
}
