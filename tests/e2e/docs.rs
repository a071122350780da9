//! docs/architecture.md stays true: every file path it names and every page
//! it links exists.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The paths a text names in backticks under the project's top folders,
/// and the pages it links, relative to the text's folder.
fn named_paths(text: &str) -> (Vec<String>, Vec<String>) {
    const TOP: [&str; 6] = [
        "engine/",
        "functions/",
        "tests/",
        "docs/",
        "infra/",
        "localstack/",
    ];
    let mut files = Vec::new();
    let mut take = |word: &str| {
        let word = word.trim_end_matches([':', '.', ')']);
        // A placeholder (`functions/<group>-lambda/`) names no one path.
        if TOP.iter().any(|t| word.starts_with(t)) && !word.contains(['<', '*', '{']) {
            files.push(word.to_string());
        }
    };
    // Outside code fences, the words in backticks; inside, every word.
    for (k, block) in text.split("```").enumerate() {
        if k % 2 == 1 {
            block.split_whitespace().for_each(&mut take);
        } else {
            for quoted in block.split('`').skip(1).step_by(2) {
                quoted.split([' ', ',']).for_each(&mut take);
            }
        }
    }
    let mut links = Vec::new();
    for part in text.split("](").skip(1) {
        let target = part.split(')').next().unwrap_or_default();
        let page = target.split('#').next().unwrap_or_default();
        if !page.is_empty() && !page.contains("://") {
            links.push(page.to_string());
        }
    }
    (files, links)
}

#[test]
fn every_path_the_architecture_names_exists() {
    let text = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let (files, links) = named_paths(&text);
    assert!(files.len() >= 40, "paths found: {files:?}");
    let missing: Vec<&String> = files
        .iter()
        .filter(|f| !root().join(f.trim_end_matches('/')).exists())
        .collect();
    assert!(missing.is_empty(), "named but missing: {missing:?}");
    let broken: Vec<&String> = links
        .iter()
        .filter(|l| !root().join("docs").join(l).exists())
        .collect();
    assert!(broken.is_empty(), "linked but missing: {broken:?}");
}

#[test]
fn a_path_that_does_not_exist_is_found() {
    let (files, links) = named_paths(
        "see `functions/api/src/nowhere.rs` and [a page](gone.md#part)\n```\nengine/src/gone.rs  why\n```\n",
    );
    assert_eq!(
        files,
        ["functions/api/src/nowhere.rs", "engine/src/gone.rs"]
    );
    assert_eq!(links, ["gone.md"]);
}
