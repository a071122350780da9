//! The inbox of a market directory trusts no entry: a symbolic link, a hard
//! link, a FIFO and a directory are refused by name, unread, and no byte of
//! what they point to lands anywhere under the data directory; a file past
//! the size limit is refused unread; a taken file is moved by rename (its
//! inode and mode kept); a refused file's report quotes at most a short
//! excerpt of it.

use platform::marketdata::{LocalDir, MarketData, ParquetMarketData};
use sample::import::inbox::{INGESTED, LocalInbox, MAX_BYTES, REJECTED, sweep};
use sample::import::{Options, Severity};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::sync::Arc;

/// A data directory: `market/` (the served data and its inbox) and
/// `state/` (secrets the server keeps, 0600 in a 0700 directory).
struct Data {
    dir: tempfile::TempDir,
    md: ParquetMarketData,
}

impl Data {
    fn new() -> Data {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("market/incoming")).unwrap();
        std::fs::create_dir_all(dir.path().join("state")).unwrap();
        std::fs::set_permissions(
            dir.path().join("state"),
            std::fs::Permissions::from_mode(0o700),
        )
        .unwrap();
        let md = ParquetMarketData::new(Arc::new(LocalDir::new(dir.path().join("market"))));
        Data { dir, md }
    }

    /// One sweep of the inbox with the default limit and options.
    async fn sweep(&self) -> Vec<sample::import::inbox::Taken> {
        let inbox = LocalInbox::new(self.market());
        sweep(&self.md, &inbox, MAX_BYTES, &Options::default())
            .await
            .unwrap()
    }

    fn market(&self) -> std::path::PathBuf {
        self.dir.path().join("market")
    }

    fn incoming(&self, name: &str) -> std::path::PathBuf {
        self.market().join("incoming").join(name)
    }

    /// A secret of the server's holding `marker`, as a CSV header would.
    fn secret(&self, name: &str, marker: &str) -> std::path::PathBuf {
        let path = self.dir.path().join("state").join(name);
        std::fs::write(&path, format!("{marker}\n{marker},1,2\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        path
    }
}

/// Every regular file under `dir` holding `marker`, links not followed.
fn holding(dir: &Path, marker: &str, skip: &[u64]) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let meta = std::fs::symlink_metadata(entry.path()).unwrap();
            if meta.is_dir() {
                stack.push(entry.path());
            } else if meta.is_file() && !skip.contains(&meta.ino()) {
                let data = std::fs::read(entry.path()).unwrap();
                if data.windows(marker.len()).any(|w| w == marker.as_bytes()) {
                    found.push(entry.path().display().to_string());
                }
            }
        }
    }
    found
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

#[tokio::test]
async fn links_fifos_and_directories_are_refused_by_name_and_nothing_they_point_to_is_copied() {
    let data = Data::new();
    let marker = format!("marker-{}", uuid::Uuid::new_v4().simple());
    let pepper = data.secret("api-keys.key", &marker);
    let hooks = data.secret("webhooks.key", &marker);
    // A symbol's bars, for a link that would import them under a new name.
    let bars = sample::import::read_csv(
        "MSFT.csv",
        b"Date,Open,High,Low,Close,Volume\n2024-01-08,10,11,9,10.5,100\n",
        None,
    )
    .unwrap();
    data.md.write_daily("MSFT", &bars).await.unwrap();
    std::os::unix::fs::symlink(&pepper, data.incoming("PEPPER.csv")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", data.incoming("PASSWD.csv")).unwrap();
    std::os::unix::fs::symlink(
        data.market().join("prices/daily/MSFT.parquet"),
        data.incoming("LINKED.parquet"),
    )
    .unwrap();
    std::fs::hard_link(&hooks, data.incoming("HOOKS.csv")).unwrap();
    mkfifo(&data.incoming("PIPE.csv"));
    std::fs::create_dir(data.incoming("FOLDER.csv")).unwrap();
    std::os::unix::fs::symlink(&pepper, data.incoming("FOLDER.csv/INSIDE.csv")).unwrap();
    // A link to a directory outside: not walked.
    std::os::unix::fs::symlink(data.dir.path().join("state"), data.incoming("STATE")).unwrap();

    let taken = data.sweep().await;
    let mut names: Vec<&str> = taken.iter().map(|t| t.name.as_str()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "FOLDER.csv",
            "HOOKS.csv",
            "LINKED.parquet",
            "PASSWD.csv",
            "PEPPER.csv",
            "PIPE.csv",
            "STATE"
        ]
    );
    for t in &taken {
        assert!(t.report.refused(), "{}", t.report);
        assert_eq!(t.report.findings.len(), 1, "{}", t.report);
        let f = &t.report.findings[0];
        assert_eq!(
            (f.severity, f.rule),
            (Severity::Error, "not_a_file"),
            "{}",
            t.report
        );
        // The report says what the entry is, by its name only.
        let report = std::fs::read_to_string(
            data.market()
                .join(REJECTED)
                .join(format!("{}.report.json", t.name)),
        )
        .unwrap();
        assert!(report.contains(&t.name), "{report}");
        assert!(!report.contains("root:"), "{report}");
    }
    let reason = |name: &str| {
        taken
            .iter()
            .find(|t| t.name == name)
            .unwrap()
            .report
            .findings[0]
            .message
            .clone()
    };
    assert!(reason("PEPPER.csv").starts_with("a symbolic link"));
    assert!(reason("HOOKS.csv").contains("2 hard links"));
    assert!(reason("PIPE.csv").starts_with("a FIFO"));
    assert!(reason("FOLDER.csv").starts_with("a directory"));
    // Links, the FIFO and the second name are gone; the directory was moved
    // whole, nothing in it opened; incoming/ is empty.
    assert_eq!(
        std::fs::read_dir(data.market().join("incoming"))
            .unwrap()
            .count(),
        0
    );
    for name in [
        "PEPPER.csv",
        "HOOKS.csv",
        "PIPE.csv",
        "LINKED.parquet",
        "STATE",
    ] {
        assert!(
            std::fs::symlink_metadata(data.market().join(REJECTED).join(name)).is_err(),
            "{name}"
        );
    }
    assert!(data.market().join(REJECTED).join("FOLDER.csv").is_dir());
    // No byte of a target under the market directory; the secrets as they were.
    let secrets = [
        pepper.metadata().unwrap().ino(),
        hooks.metadata().unwrap().ino(),
    ];
    assert_eq!(
        holding(data.dir.path(), &marker, &secrets),
        Vec::<String>::new()
    );
    assert!(holding(&data.market(), "root:", &[]).is_empty());
    for s in [&pepper, &hooks] {
        let meta = s.metadata().unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(meta.nlink(), 1);
        assert!(std::fs::read_to_string(s).unwrap().starts_with(&marker));
    }
    // The link to MSFT's bars imported nothing.
    let symbols = data.md.symbols().await;
    assert!(
        symbols.map_or(true, |s| s.iter().all(|i| i.symbol != "LINKED")),
        "a linked file was imported"
    );
}

#[tokio::test]
async fn a_file_past_the_limit_is_refused_unread_and_files_move_by_rename() {
    let data = Data::new();
    let big = data.incoming("BIG.csv");
    std::fs::write(&big, vec![b'x'; 2048]).unwrap();
    std::fs::set_permissions(&big, std::fs::Permissions::from_mode(0o640)).unwrap();
    let ino = big.metadata().unwrap().ino();
    let good = data.incoming("ABC.csv");
    std::fs::write(
        &good,
        "Date,Open,High,Low,Close,Volume\n2024-01-08,10,11,9,10.5,100\n",
    )
    .unwrap();
    let good_ino = good.metadata().unwrap().ino();
    let inbox = LocalInbox::new(data.market());
    let taken = sweep(&data.md, &inbox, 1024, &Options::default())
        .await
        .unwrap();
    assert_eq!(taken.len(), 2);
    let t = &taken[1];
    assert_eq!(t.name, "BIG.csv");
    assert_eq!(t.report.findings[0].rule, "too_large", "{}", t.report);
    assert!(t.report.findings[0].message.contains("2048 bytes"));
    assert!(t.report.findings[0].message.contains("1024"));
    // Moved, not rewritten: the same inode and mode.
    let moved = data
        .market()
        .join(REJECTED)
        .join("BIG.csv")
        .metadata()
        .unwrap();
    assert_eq!(
        (moved.ino(), moved.permissions().mode() & 0o777),
        (ino, 0o640)
    );
    assert!(!taken[0].report.refused(), "{}", taken[0].report);
    let moved = data
        .market()
        .join(INGESTED)
        .join("ABC.csv")
        .metadata()
        .unwrap();
    assert_eq!(moved.ino(), good_ino);
    assert_eq!(data.md.daily("ABC").await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_refused_file_is_quoted_by_a_short_excerpt_at_most() {
    let data = Data::new();
    let marker = "z".repeat(200);
    std::fs::write(data.incoming("ODD.csv"), format!("{marker},a,b\n1,2,3\n")).unwrap();
    std::fs::write(
        data.incoming("DATE.csv"),
        format!("Date,Open,High,Low,Close,Volume\n{marker},1,1,1,1,1\n"),
    )
    .unwrap();
    let taken = data.sweep().await;
    assert_eq!(taken.len(), 2);
    for t in taken {
        let text = t.report.findings[0].message.clone();
        assert!(t.report.refused());
        assert!(text.contains(&"z".repeat(32)), "{text}");
        assert!(!text.contains(&"z".repeat(33)), "{text}");
        let report = std::fs::read_to_string(
            data.market()
                .join(REJECTED)
                .join(format!("{}.report.json", t.name)),
        )
        .unwrap();
        assert!(!report.contains(&"z".repeat(33)), "{report}");
    }
}

#[tokio::test]
async fn a_csv_of_more_rows_than_a_daily_series_holds_is_refused_once_read_past_them() {
    let data = Data::new();
    // The same session repeated: refused at the row past the bound, not
    // after holding every row of the file.
    let mut text = String::from("Date,Open,High,Low,Close,Volume\n");
    for _ in 0..(sample::import::MAX_ROWS + 10) {
        text.push_str("2024-01-08,10,11,9,10.5,100\n");
    }
    std::fs::write(data.incoming("REP.csv"), text).unwrap();
    let taken = data.sweep().await;
    let f = &taken[0].report.findings[0];
    assert_eq!(f.rule, "unreadable");
    assert_eq!(f.line, sample::import::MAX_ROWS + 2);
    assert!(f.message.contains("more than 100000 rows"), "{}", f.message);
}

const HEAD: &str = "Date,Open,High,Low,Close,Volume\n";

/// An Alpaca multi-symbol answer: `A`'s bar of 2024-01-10.
const LATER_A: &str = r#"{"bars": {"A": [{"t": "2024-01-10T05:00:00Z", "o": 10.8, "h": 11.2, "l": 10.6, "c": 11, "v": 100}]}, "next_page_token": null}"#;

/// Files for one sweep: two symbols' first sessions, then a file adding a
/// session to one of them (read from what the sweep wrote aside).
fn drop_files(data: &Data) {
    std::fs::write(
        data.incoming("A.csv"),
        format!("{HEAD}2024-01-08,10,11,9,10.5,100\n2024-01-09,10.5,11,10,10.8,100\n"),
    )
    .unwrap();
    std::fs::write(
        data.incoming("B.csv"),
        format!("{HEAD}2024-01-08,20,21,19,20.5,100\n"),
    )
    .unwrap();
    std::fs::write(data.incoming("Z.json"), LATER_A).unwrap();
}

#[tokio::test]
async fn a_sweep_of_several_files_is_one_import_and_one_generation() {
    use platform::marketdata::generation::Generation;
    let data = Data::new();
    drop_files(&data);
    let taken = data.sweep().await;
    let names: Vec<&str> = taken.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["A.csv", "B.csv", "Z.json"]);
    assert!(taken.iter().all(|t| !t.report.refused()));
    let g = Generation::read(data.md.blobs().as_ref()).await.unwrap();
    assert_eq!(g.number, 1, "one generation for the sweep");
    assert!(taken.iter().all(|t| t.generation == Some(1)));
    // The third file merged onto what the first wrote aside.
    assert_eq!(data.md.daily("A").await.unwrap().len(), 3);
    assert_eq!(data.md.daily("B").await.unwrap().len(), 1);
    let symbols = data.md.symbols().await.unwrap();
    let a = symbols.iter().find(|s| s.symbol == "A").unwrap();
    assert_eq!(a.last_date.to_string(), "2024-01-10");
    assert!(symbols.iter().any(|s| s.symbol == "B"));
    // Nothing left aside.
    let aside = std::fs::read_dir(data.market().join("staging")).map_or(0, |d| d.count());
    assert_eq!(aside, 0);
}

#[tokio::test]
async fn a_sweep_cut_short_before_its_commit_serves_none_of_its_files_and_keeps_them() {
    use futures::FutureExt;
    use platform::marketdata::staging::Step;
    let data = Data::new();
    drop_files(&data);
    let inbox = LocalInbox::new(data.market());
    // Stopped where a kill would stop it: every file written aside.
    let stop = Options {
        at: sample::import::At::new(|at| {
            if at == Step::Staged {
                panic!("stopped at {at:?}");
            }
        }),
        ..Default::default()
    };
    let run = std::panic::AssertUnwindSafe(sweep(&data.md, &inbox, MAX_BYTES, &stop));
    assert!(run.catch_unwind().await.is_err());
    assert!(data.md.daily("A").await.is_err(), "nothing served");
    assert_eq!(
        std::fs::read_dir(data.market().join("incoming"))
            .unwrap()
            .count(),
        3
    );
    // The next turn removes what was aside and takes the files again.
    sample::import::recover(&data.md).await.unwrap();
    assert!(!data.market().join("staging").exists());
    let taken = sweep(&data.md, &inbox, MAX_BYTES, &Options::default())
        .await
        .unwrap();
    assert_eq!(taken.len(), 3);
    assert_eq!(data.md.daily("A").await.unwrap().len(), 3);
}

#[tokio::test]
async fn a_file_with_a_bad_symbol_name_is_refused_and_blocks_nothing_else() {
    let data = Data::new();
    std::fs::write(
        data.incoming("a b.csv"),
        format!("{HEAD}2024-01-08,10,11,9,10.5,100\n"),
    )
    .unwrap();
    std::fs::write(
        data.incoming("p.json"),
        r#"{"status": "OK", "results": [{"T": "../../state/x", "o": 1, "h": 1, "l": 1, "c": 1, "v": 1, "t": 1704690000000}]}"#,
    )
    .unwrap();
    std::fs::write(
        data.incoming("AAA.csv"),
        format!("{HEAD}2024-01-08,10,11,9,10.5,100\n"),
    )
    .unwrap();
    let taken = data.sweep().await;
    let outcome: Vec<(&str, bool)> = taken
        .iter()
        .map(|t| (t.name.as_str(), t.report.refused()))
        .collect();
    assert_eq!(
        outcome,
        [("AAA.csv", false), ("a b.csv", true), ("p.json", true)]
    );
    assert_eq!(taken[1].report.findings[0].rule, "invalid_symbol");
    assert_eq!(taken[2].report.findings[0].rule, "invalid_symbol");
    assert_eq!(data.md.daily("AAA").await.unwrap().len(), 1);
    assert!(!data.dir.path().join("state/x").exists());
}

#[tokio::test]
async fn a_file_replaced_by_a_link_while_it_is_imported_moves_nothing_of_the_link() {
    use sample::import::inbox::{Inbox, Opened, Settle};
    let data = Data::new();
    let marker = format!("marker-{}", uuid::Uuid::new_v4().simple());
    let pepper = data.secret("api-keys.key", &marker);
    for (name, swap) in [("H.csv", "hard"), ("S.csv", "symbolic")] {
        std::fs::write(
            data.incoming(name),
            format!("{HEAD}2024-01-08,10,11,9,10.5,100\n"),
        )
        .unwrap();
        let inbox = LocalInbox::new(data.market());
        let Opened::File(_, id) = inbox.open(name, MAX_BYTES).await.unwrap() else {
            panic!("a regular file opens");
        };
        // Between the open and the move, the name now points at the pepper.
        let beside = data.market().join("beside");
        match swap {
            "hard" => std::fs::hard_link(&pepper, &beside).unwrap(),
            _ => std::os::unix::fs::symlink(&pepper, &beside).unwrap(),
        }
        std::fs::rename(&beside, data.incoming(name)).unwrap();
        inbox
            .settle(name, INGESTED, Settle::Move(id), b"{}".to_vec())
            .await
            .unwrap();
        assert!(
            std::fs::symlink_metadata(data.market().join(INGESTED).join(name)).is_err(),
            "{swap}"
        );
        assert!(
            std::fs::symlink_metadata(data.incoming(name)).is_err(),
            "{swap}"
        );
    }
    let pepper_ino = pepper.metadata().unwrap().ino();
    assert_eq!(
        holding(data.dir.path(), &marker, &[pepper_ino]),
        Vec::<String>::new()
    );
    assert_eq!(pepper.metadata().unwrap().nlink(), 1);
}

#[tokio::test]
async fn a_linked_incoming_or_rejected_directory_is_not_used() {
    let data = Data::new();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(
        elsewhere.path().join("X.csv"),
        format!("{HEAD}2024-01-08,10,11,9,10.5,100\n"),
    )
    .unwrap();
    std::fs::remove_dir(data.market().join("incoming")).unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), data.market().join("incoming")).unwrap();
    let inbox = LocalInbox::new(data.market());
    let e = sweep(&data.md, &inbox, MAX_BYTES, &Options::default())
        .await
        .unwrap_err();
    assert!(e.to_string().contains("not a directory"), "{e}");
    assert!(elsewhere.path().join("X.csv").exists());
    // A linked rejected/ receives nothing.
    std::fs::remove_file(data.market().join("incoming")).unwrap();
    std::fs::create_dir(data.market().join("incoming")).unwrap();
    std::fs::write(data.incoming("bad.txt"), "x").unwrap();
    std::os::unix::fs::symlink(
        elsewhere.path(),
        data.market().join(REJECTED.trim_end_matches('/')),
    )
    .unwrap();
    assert!(
        sweep(&data.md, &inbox, MAX_BYTES, &Options::default())
            .await
            .is_err()
    );
    assert!(!elsewhere.path().join("bad.txt").exists());
    assert!(data.incoming("bad.txt").exists());
}
