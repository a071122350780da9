//! Tenant handlers take the state from `auth::Tenant`, which gives a
//! test-mode caller its sample data and fails closed without a scope check:
//! only the public routes read the router's state directly.

#[test]
fn only_public_handlers_take_the_router_state() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    let mut dirs = vec![src.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let name = path
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .to_string();
            if name == "state.rs" || name == "routes/health.rs" {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for (i, line) in text.lines().enumerate() {
                if line.contains("): Shared") || line.contains("State<AppState>") {
                    found.push(format!("{name}:{}: {}", i + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "handlers outside `Tenant`:\n{}",
        found.join("\n")
    );
}
