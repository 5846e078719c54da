//! Keeps `include/pgas_shim.h` in sync with `src/ffi/`: the header must
//! declare exactly the functions the library exports, with the same
//! parameter and return types (through a fixed Rust-to-C type table), and
//! its constants must equal the Rust ones. It must also compile as C11 with
//! every warning an error, and its version macros must be the crate's.

use runtime_shim::error::code;
use runtime_shim::{AmoType, AtomicOp};
use std::collections::BTreeMap;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Rust type (as written in src/ffi/) -> C type (as written in the header).
fn c_type(rust: &str) -> Option<&'static str> {
    Some(match rust {
        "c_int" => "int",
        "i32" => "int32_t",
        "u64" => "uint64_t",
        "usize" => "size_t",
        "()" | "!" => "void",
        "*const c_void" => "const void *",
        "*mut c_void" => "void *",
        "*mut *mut c_void" => "void **",
        "*const c_char" => "const char *",
        "*mut c_char" => "char *",
        "*const usize" => "const size_t *",
        "*mut usize" => "size_t *",
        "*mut c_int" => "int *",
        "Option<OnFn>" => "pgas_on_fn",
        "Option<TaskFn>" => "pgas_task_fn",
        "*mut PgasOnCtx" => "pgas_on_ctx_t *",
        "*const PgasOnCtx" => "const pgas_on_ctx_t *",
        "*mut PgasHandle" => "pgas_handle_t *",
        "*mut *mut PgasHandle" => "pgas_handle_t **",
        "*mut PgasTask" => "pgas_task_t *",
        "*mut PgasTeam" => "pgas_team_t *",
        "*mut *mut PgasTeam" => "pgas_team_t **",
        "i64" => "int64_t",
        "*mut u64" => "uint64_t *",
        "*mut PgasAmoHandle" => "pgas_amo_handle_t *",
        "*mut *mut PgasAmoHandle" => "pgas_amo_handle_t **",
        "*mut *mut PgasTask" => "pgas_task_t **",
        "*mut PgasCommDiags" => "pgas_comm_diags_t *",
        _ => return None,
    })
}

type Sig = (String, Vec<String>);

/// The C ABI's sources: every file of `src/ffi/`, in name order.
fn ffi_sources() -> String {
    let dir = root().join("src/ffi");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 2,
        "found only {files:?} in {}",
        dir.display()
    );
    files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `extern "C" fn` of src/ffi/ that is `#[no_mangle]`: name -> (ret, params).
fn rust_fns() -> BTreeMap<String, Sig> {
    let src = ffi_sources();
    let mut out = BTreeMap::new();
    let mut rest = src.as_str();
    while let Some(i) = rest.find("#[no_mangle]") {
        rest = &rest[i + 12..];
        let f = rest
            .find("extern \"C\" fn ")
            .expect("no_mangle before a fn");
        rest = &rest[f + 14..];
        let open = rest.find('(').unwrap();
        let name = rest[..open].trim().to_string();
        let mut depth = 0;
        let mut close = 0;
        for (k, c) in rest[open..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        close = open + k;
                        break;
                    }
                }
                _ => {}
            }
        }
        let params: Vec<String> = rest[open + 1..close]
            .split(',')
            .map(squash)
            .filter(|p| !p.is_empty())
            .map(|p| {
                let ty = p.split_once(':').expect("name: type").1.trim().to_string();
                c_type(&ty)
                    .unwrap_or_else(|| panic!("{name}: no C type for Rust type {ty:?}"))
                    .to_string()
            })
            .collect();
        let tail = &rest[close + 1..rest.find('{').unwrap()];
        let ret = match tail.trim().strip_prefix("->") {
            Some(t) => squash(t),
            None => "()".into(),
        };
        let ret = c_type(&ret)
            .unwrap_or_else(|| panic!("{name}: no C type for return type {ret:?}"))
            .to_string();
        out.insert(name, (ret, params));
    }
    out
}

/// Every non-static prototype `RET pgas_NAME(PARAMS);` of the header.
fn header_fns(h: &str) -> BTreeMap<String, Sig> {
    // Drop comments and preprocessor lines (the typed-atomic macros).
    let mut text = String::new();
    let mut in_comment = false;
    let mut in_macro = false;
    for line in h.lines() {
        let mut l = line.to_string();
        if in_macro {
            in_macro = l.trim_end().ends_with('\\');
            continue;
        }
        if !in_comment && l.trim_start().starts_with('#') {
            in_macro = l.trim_end().ends_with('\\');
            continue;
        }
        let mut kept = String::new();
        let mut rest = l.as_str();
        loop {
            if in_comment {
                match rest.find("*/") {
                    Some(e) => {
                        rest = &rest[e + 2..];
                        in_comment = false;
                    }
                    None => break,
                }
            } else {
                match rest.find("/*") {
                    Some(s) => {
                        kept.push_str(&rest[..s]);
                        rest = &rest[s + 2..];
                        in_comment = true;
                    }
                    None => {
                        kept.push_str(rest);
                        break;
                    }
                }
            }
        }
        l = kept;
        text.push_str(&l);
        text.push('\n');
    }
    let mut out = BTreeMap::new();
    for decl in text.split(';') {
        let d = squash(decl);
        if d.starts_with("typedef") || d.contains("static inline") || !d.contains("pgas_") {
            continue;
        }
        let d = d
            .trim_start_matches("extern \"C\" {")
            .trim_start_matches('}')
            .trim()
            .to_string();
        let Some(open) = d.find('(') else { continue };
        let head = &d[..open];
        let name_start = head
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map_or(0, |i| i + 1);
        let name = head[name_start..].to_string();
        let ret = squash(&head[..name_start].replace('*', " * "));
        let params_s = &d[open + 1..d.rfind(')').unwrap()];
        let params: Vec<String> = if params_s.trim() == "void" {
            Vec::new()
        } else {
            params_s
                .split(',')
                .map(|p| {
                    // Drop the parameter name: the last identifier.
                    let p = squash(&p.replace('*', " * "));
                    let cut = p.rfind(' ').expect("type and name");
                    let ty = p[..cut].trim().to_string();
                    ty.replace("* *", "**")
                })
                .collect()
        };
        out.insert(
            name,
            (normal(&ret), params.iter().map(|p| normal(p)).collect()),
        );
    }
    out
}

/// One spelling for a C type: `T *`, `T **`.
fn normal(t: &str) -> String {
    let t = squash(&t.replace('*', " * "));
    t.replace("* *", "**")
}

#[test]
fn header_declares_exactly_the_exported_functions() {
    let h = std::fs::read_to_string(root().join("include/pgas_shim.h")).unwrap();
    let rust = rust_fns();
    let c = header_fns(&h);
    assert!(
        rust.len() >= 40,
        "parsed only {} Rust functions",
        rust.len()
    );
    let rn: Vec<_> = rust.keys().collect();
    let cn: Vec<_> = c.keys().collect();
    assert_eq!(rn, cn, "function lists differ (Rust left, header right)");
    for (name, (ret, params)) in &rust {
        let (cret, cparams) = &c[name];
        assert_eq!(&normal(ret), cret, "{name}: return type");
        let p: Vec<String> = params.iter().map(|p| normal(p)).collect();
        assert_eq!(&p, cparams, "{name}: parameter types");
    }
}

fn defines(h: &str) -> BTreeMap<String, i64> {
    h.lines()
        .filter_map(|l| {
            let l = l.split("/*").next().unwrap();
            let mut w = l.split_whitespace();
            if w.next() != Some("#define") {
                return None;
            }
            let name = w.next()?.to_string();
            let v: String = w.collect::<Vec<_>>().join("");
            let v = v.trim_start_matches('(').trim_end_matches(')');
            v.parse().ok().map(|v| (name, v))
        })
        .collect()
}

#[test]
fn header_constants_equal_the_rust_ones() {
    let h = std::fs::read_to_string(root().join("include/pgas_shim.h")).unwrap();
    let d = defines(&h);
    for (name, value, _) in code::ALL {
        assert_eq!(d.get(name), Some(&(value as i64)), "{name}");
    }
    let type_names = [
        "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64", "REAL32",
        "REAL64",
    ];
    assert_eq!(type_names.len(), AmoType::ALL.len());
    for (i, (n, ty)) in type_names.iter().zip(AmoType::ALL).enumerate() {
        assert_eq!(
            d.get(&format!("PGAS_TYPE_{n}")),
            Some(&(i as i64)),
            "{ty:?}"
        );
    }
    for (i, op) in AtomicOp::ALL.iter().enumerate() {
        let n = format!("PGAS_AMO_{}", format!("{op:?}").to_ascii_uppercase());
        assert_eq!(d.get(&n), Some(&(i as i64)), "{n}");
    }
    for (i, c) in runtime_shim::Cmp::ALL.iter().enumerate() {
        let n = format!("PGAS_CMP_{}", format!("{c:?}").to_ascii_uppercase());
        assert_eq!(d.get(&n), Some(&(i as i64)), "{n}");
    }
    for (i, op) in runtime_shim::ReduceOp::ALL.iter().enumerate() {
        let n = format!("PGAS_OP_{}", format!("{op:?}").to_ascii_uppercase());
        assert_eq!(d.get(&n), Some(&(i as i64)), "{n}");
    }
    assert_eq!(
        d.get("PGAS_AMO_FETCH"),
        Some(&(runtime_shim::ffi::AMO_FETCH as i64))
    );
    assert_eq!(
        d.get("PGAS_AMO_UNORDERED"),
        Some(&(runtime_shim::ffi::AMO_UNORDERED as i64))
    );
    // Every error code has a distinct strerror text, and unknown codes one too.
    let mut texts = std::collections::BTreeSet::new();
    for (_, value, _) in code::ALL {
        let t = runtime_shim::ffi::pgas_strerror(value);
        // SAFETY: pgas_strerror returns a static NUL-terminated string.
        texts.insert(unsafe { std::ffi::CStr::from_ptr(t) }.to_owned());
    }
    assert_eq!(texts.len(), code::ALL.len());
    // SAFETY: as above.
    let unknown = unsafe { std::ffi::CStr::from_ptr(runtime_shim::ffi::pgas_strerror(-99)) };
    assert_eq!(unknown.to_str().unwrap(), "unknown error code");
}

#[test]
fn header_version_macros_are_the_crate_version() {
    let h = std::fs::read_to_string(root().join("include/pgas_shim.h")).unwrap();
    let d = defines(&h);
    let crate_version = [
        ("PGAS_SHIM_VERSION_MAJOR", env!("CARGO_PKG_VERSION_MAJOR")),
        ("PGAS_SHIM_VERSION_MINOR", env!("CARGO_PKG_VERSION_MINOR")),
        ("PGAS_SHIM_VERSION_PATCH", env!("CARGO_PKG_VERSION_PATCH")),
    ];
    for (name, v) in crate_version {
        let v: i64 = v.parse().unwrap();
        assert_eq!(d.get(name), Some(&v), "{name} (crate version {v})");
    }
    // And the run-time call reports the same, NULL parts skipped.
    let (mut ma, mut mi, mut pa) = (-1, -1, -1);
    // SAFETY: three writable ints.
    let r = unsafe { runtime_shim::ffi::pgas_version(&mut ma, &mut mi, &mut pa) };
    assert_eq!(r, 0);
    assert_eq!(
        [ma, mi, pa].map(i64::from),
        crate_version.map(|(_, v)| v.parse::<i64>().unwrap())
    );
    let mut only_minor = -1;
    // SAFETY: NULL parts are skipped; one writable int.
    let r = unsafe {
        runtime_shim::ffi::pgas_version(std::ptr::null_mut(), &mut only_minor, std::ptr::null_mut())
    };
    assert_eq!(
        (r, i64::from(only_minor)),
        (0, crate_version[1].1.parse().unwrap())
    );
}

#[test]
fn header_compiles_as_strict_c() {
    let dir = std::env::temp_dir().join(format!("pgas-shim-header-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tu = dir.join("tu.c");
    std::fs::write(
        &tu,
        "#include <pgas_shim.h>\nint main(void) { return pgas_here() == -1 ? 0 : 1; }\n",
    )
    .unwrap();
    let out = std::process::Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args([
            "-std=c11",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-fsyntax-only",
            "-I",
        ])
        .arg(root().join("include"))
        .arg(&tu)
        .output()
        .expect("run the C compiler (cc)");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_parsers_catch_a_mismatch() {
    // A header missing one prototype and with one wrong parameter type must differ.
    let h = std::fs::read_to_string(root().join("include/pgas_shim.h")).unwrap();
    let broken = h
        .replace("int pgas_barrier(void);", "")
        .replace("int pgas_free(void *p);", "int pgas_free(const void *p);");
    let c = header_fns(&broken);
    let rust = rust_fns();
    assert!(!c.contains_key("pgas_barrier"));
    assert_ne!(
        c["pgas_free"].1,
        rust["pgas_free"]
            .1
            .iter()
            .map(|p| normal(p))
            .collect::<Vec<_>>()
    );
}
