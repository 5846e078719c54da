//! Every C snippet of `docs/embedding.md` compiles against the header
//! (`cc -std=c11 -Wall -Werror`) and links against the library this build
//! made (`libruntime_shim.so`: every function a snippet calls must exist);
//! a snippet without `main` gets an empty one, and its static functions are
//! kept (`-fkeep-static-functions`) so their calls are linked too. The Rust
//! snippets are doctests of the crate (`src/lib.rs`, `EmbeddingGuide`).

use std::path::Path;
use std::process::Command;

fn c_snippets(md: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    for line in md.lines() {
        match (&mut cur, line.trim_start()) {
            (None, "```c") => cur = Some(String::new()),
            (Some(_), "```") => out.push(cur.take().expect("inside")),
            (Some(s), _) => {
                s.push_str(line);
                s.push('\n');
            }
            _ => {}
        }
    }
    out
}

/// `target/<profile>` of this test binary (`target/<profile>/deps/NAME`),
/// where the library's cdylib is.
fn lib_dir() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(Path::parent).unwrap().to_path_buf();
    assert!(
        dir.join("libruntime_shim.so").is_file(),
        "{}: no libruntime_shim.so (cargo builds the cdylib with the tests)",
        dir.display()
    );
    dir
}

#[test]
fn the_c_snippets_of_the_embedding_guide_compile_and_link() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let md = std::fs::read_to_string(root.join("../docs/embedding.md")).unwrap();
    let snippets = c_snippets(&md);
    assert!(snippets.len() >= 2, "found {} C snippets", snippets.len());
    let libs = lib_dir();
    let dir = std::env::temp_dir().join(format!("pgas-doc-snippets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, src) in snippets.iter().enumerate() {
        let file = dir.join(format!("snippet{i}.c"));
        let mut text = src.clone();
        if !src.contains("main(") {
            text.push_str("\nint main(void) { return 0; }\n");
        }
        std::fs::write(&file, &text).unwrap();
        let out = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
            .args([
                "-std=c11",
                "-Wall",
                "-Werror",
                "-Wno-unused-function",
                "-fkeep-static-functions",
                "-I",
            ])
            .arg(root.join("include"))
            .arg(&file)
            .arg("-o")
            .arg(dir.join(format!("snippet{i}")))
            .arg("-L")
            .arg(&libs)
            .args(["-lruntime_shim", "-lm"])
            .output()
            .expect("run cc");
        assert!(
            out.status.success(),
            "C snippet {i} of docs/embedding.md does not compile and link:\n{src}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_snippet_finder_finds_c_blocks_only() {
    let md = "text\n```c\nint x;\n```\n```rust\nfn f() {}\n```\n```c\nint y;\n```\n";
    assert_eq!(
        c_snippets(md),
        vec!["int x;\n".to_string(), "int y;\n".to_string()]
    );
}
