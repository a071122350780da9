//! Timing helpers the benchmark binaries share.

use std::time::{Duration, Instant};

/// Median wall time of `f` over enough runs to fill about `budget`.
pub fn median<F: FnMut()>(budget: Duration, mut f: F) -> Duration {
    f();
    let probe = Instant::now();
    f();
    let one = probe.elapsed().max(Duration::from_nanos(50));
    let runs = ((budget.as_secs_f64() / one.as_secs_f64()) as usize).clamp(5, 20_000);
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

/// Replaces the lines between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->`
/// in `docs/<doc>` with `lines` as a list.
pub fn write_docs_block(doc: &str, name: &str, lines: &[String]) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../docs")
        .join(doc);
    let text = std::fs::read_to_string(&path).unwrap();
    let (open, close) = (
        format!("<!-- bench:{name} -->"),
        format!("<!-- /bench:{name} -->"),
    );
    let (a, b) = (
        text.find(&open).expect("the opening marker"),
        text.find(&close).expect("the closing marker"),
    );
    let block: Vec<String> = lines.iter().map(|l| format!("- {l}")).collect();
    let out = format!("{}{open}\n{}\n{}", &text[..a], block.join("\n"), &text[b..]);
    std::fs::write(&path, out).unwrap();
    println!("  (written to docs/{doc})");
}
