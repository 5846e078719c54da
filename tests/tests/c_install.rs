//! The C library as a C programmer gets it: `scripts/install PREFIX` into a
//! temporary directory, then the C examples (`runtime-shim/examples/c`)
//! built from the installed tree with pkg-config, shared and static, with
//! the very commands the header and docs/embedding.md give, and run under
//! the installed `pgasrun`. Also: the layout (SONAME, links, .pc file) and
//! the version call against the header's macros.

use pgas_tests::target_dir;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The documented link lines (header comment and docs/embedding.md).
const DYNAMIC: &str = "cc prog.c $(pkg-config --cflags --libs pgas-shim) -o prog";
const STATIC: &str = "cc prog.c $(pkg-config --static --cflags --libs pgas-shim | \
                      sed 's/-lpgas_shim/-l:libpgas_shim.a/') -o prog";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn readelf_dynamic(file: &Path) -> String {
    let o = Command::new("readelf")
        .arg("-d")
        .arg(file)
        .output()
        .expect("run readelf (binutils)");
    assert!(
        o.status.success(),
        "readelf -d {}: {}",
        file.display(),
        text(&o)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A fresh empty directory under the system temp dir.
fn scratch(what: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pgas-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs a documented build line (`cc prog.c ... -o prog`) on `src` into
/// `out`, with the installed tree's pkg-config, warnings as errors.
fn build(line: &str, prefix: &Path, src: &Path, out: &Path) {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let cmd = line
        .replacen("cc ", &format!("{cc} "), 1)
        .replace("prog.c", &src.display().to_string())
        .replace("-o prog", &format!("-o {}", out.display()))
        + " -std=c11 -Wall -Wextra -Werror -lm";
    let o = Command::new("sh")
        .arg("-c")
        .arg(&cmd)
        .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
        .output()
        .expect("run sh");
    assert!(o.status.success(), "{cmd}\n{}", text(&o));
}

#[test]
fn the_header_and_the_guide_give_the_same_link_lines() {
    let ws = workspace();
    let h = std::fs::read_to_string(ws.join("runtime-shim/include/pgas_shim.h")).unwrap();
    // The header's comment, without its " * " leaders.
    let h = squash(
        &h.lines()
            .map(|l| l.trim_start().trim_start_matches('*'))
            .collect::<Vec<_>>()
            .join(" "),
    );
    let guide = squash(&std::fs::read_to_string(ws.join("docs/embedding.md")).unwrap());
    for line in [DYNAMIC, STATIC] {
        let line = squash(line);
        assert!(h.contains(&line), "pgas_shim.h lacks: {line}");
        assert!(guide.contains(&line), "docs/embedding.md lacks: {line}");
    }
}

#[test]
fn installed_library_builds_and_runs_the_c_examples_shared_and_static() {
    let ws = workspace();
    let prefix = scratch("install");
    let target_root = target_dir().parent().unwrap().to_path_buf();
    let o = Command::new("bash")
        .arg(ws.join("scripts/install"))
        .arg(&prefix)
        .env("CARGO_TARGET_DIR", &target_root)
        .output()
        .expect("run scripts/install");
    assert!(o.status.success(), "scripts/install: {}", text(&o));

    // The layout.
    let version = env!("CARGO_PKG_VERSION");
    let major = env!("CARGO_PKG_VERSION_MAJOR");
    let lib = prefix.join("lib");
    for f in [
        prefix.join("include/pgas_shim.h"),
        lib.join(format!("libpgas_shim.so.{version}")),
        lib.join("libpgas_shim.a"),
        lib.join("pkgconfig/pgas-shim.pc"),
        prefix.join("bin/pgasrun"),
    ] {
        assert!(f.is_file(), "{} missing", f.display());
    }
    let link = |name: &str| std::fs::read_link(lib.join(name)).unwrap();
    assert_eq!(
        link(&format!("libpgas_shim.so.{major}")),
        PathBuf::from(format!("libpgas_shim.so.{version}"))
    );
    assert_eq!(
        link("libpgas_shim.so"),
        PathBuf::from(format!("libpgas_shim.so.{major}"))
    );
    let so = readelf_dynamic(&lib.join(format!("libpgas_shim.so.{version}")));
    assert!(
        so.contains(&format!("Library soname: [libpgas_shim.so.{major}]")),
        "{so}"
    );
    let pc = std::fs::read_to_string(lib.join("pkgconfig/pgas-shim.pc")).unwrap();
    assert!(
        pc.contains(&format!("prefix={}\n", prefix.display()))
            && pc.contains(&format!("Version: {version}\n"))
            && pc.contains("Libs.private: -lfabric"),
        "{pc}"
    );
    let o = Command::new("pkg-config")
        .args(["--modversion", "pgas-shim"])
        .env("PKG_CONFIG_PATH", lib.join("pkgconfig"))
        .output()
        .expect("run pkg-config");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        version,
        "{}",
        text(&o)
    );

    // The version call against the macros, shared and static.
    let build_dir = scratch("install-build");
    let vsrc = build_dir.join("version.c");
    std::fs::write(
        &vsrc,
        "#include <pgas_shim.h>\n#include <stdio.h>\n\
         int main(void) {\n  int ma = -1, mi = -1, pa = -1;\n\
           if (pgas_version(&ma, &mi, &pa) != PGAS_OK) return 2;\n\
           printf(\"version %d.%d.%d\\n\", ma, mi, pa);\n\
           return !(ma == PGAS_SHIM_VERSION_MAJOR && mi == PGAS_SHIM_VERSION_MINOR \
                    && pa == PGAS_SHIM_VERSION_PATCH);\n}\n",
    )
    .unwrap();

    let examples = ws.join("runtime-shim/examples/c");
    for (mode, line) in [("shared", DYNAMIC), ("static", STATIC)] {
        let v = build_dir.join(format!("version_{mode}"));
        build(line, &prefix, &vsrc, &v);
        let o = Command::new(&v)
            .env_remove("LD_LIBRARY_PATH")
            .output()
            .unwrap();
        assert!(
            o.status.success() && String::from_utf8_lossy(&o.stdout).contains(version),
            "{mode} version program: {}",
            text(&o)
        );
        for (name, np, n, want) in [
            ("histogram", "-n", "2", "histogram: 40000 of 40000 draws"),
            (
                "stencil2d",
                "-np",
                "3",
                "stencil2d: 3 x 32 x 64 grid, residual",
            ),
        ] {
            let out = build_dir.join(format!("{name}_{mode}"));
            build(line, &prefix, &examples.join(format!("{name}.c")), &out);
            let needed = readelf_dynamic(&out);
            assert_eq!(
                needed.contains(&format!("Shared library: [libpgas_shim.so.{major}]")),
                mode == "shared",
                "{name} ({mode}) dynamic section:\n{needed}"
            );
            // The installed launcher (also with MPI's spelling, -np); the
            // shared program finds the library by the .pc file's rpath alone.
            let o = Command::new(prefix.join("bin/pgasrun"))
                .args([np, n, "--timeout", "120"])
                .arg(&out)
                .env_remove("LD_LIBRARY_PATH")
                .output()
                .expect("run the installed pgasrun");
            let stdout = String::from_utf8_lossy(&o.stdout);
            assert!(
                o.status.success() && stdout.contains(want),
                "{name} ({mode}) under pgasrun {np} {n}: {}",
                text(&o)
            );
        }
    }
    let _ = std::fs::remove_dir_all(&build_dir);
    let _ = std::fs::remove_dir_all(&prefix);
}
