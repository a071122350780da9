//! A batch followed over HTTP as a notebook follows it: long-polls of its
//! status answered at its last chunk's end (woken by it, sharing one read;
//! on the emulator, with the worker in another process, by the outcomes
//! counted to the batch), and its rows read a page at a time, equal to the
//! Parquet export.

use async_trait::async_trait;
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::tasks::{Task, TaskKind};
use platform::worker::{JobError, JobHandler, JobRegistry, Progress};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tests::server::{Options, TestServer, eventually};
use tokio::sync::Semaphore;

const DEMO: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));
const WAITERS: usize = 20;

/// The batch's chunk job, run when the test lets one through: each chunk
/// ends at a moment the test chooses.
struct Gated {
    inner: Arc<dyn JobHandler>,
    gate: Arc<Semaphore>,
}

#[async_trait]
impl JobHandler for Gated {
    async fn run(&self, task: Task, progress: Progress) -> Result<Value, JobError> {
        self.gate
            .acquire()
            .await
            .expect("the gate stays open")
            .forget();
        self.inner.run(task, progress).await
    }

    fn reserved(&self, task: &Task) -> platform::metering::Reserved {
        self.inner.reserved(task)
    }
}

/// 500 strategies: two chunks of 250, without statistics (their cost,
/// paid at the first read after the last chunk, is measured apart).
fn grid() -> Value {
    let periods: Vec<String> = (2..502).map(|p| p.to_string()).collect();
    json!({"name": "waited on", "statistics": false,
        "strategy": {"symbol": "SPX", "start_date": "2016-01-04", "risk_control": "//",
            "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Symbol Close"},
                "rule": {"comparison_type": "SVMA", "type_name": "CrossAbove", "comparison_value": "0", "period": "20"}}},
            "exit": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Symbol Close"},
                "rule": {"comparison_type": "SVMA", "type_name": "CrossBelow", "comparison_value": "0", "period": "20"}}}},
        "grid": {"entry.condition.rule.period,exit.condition.rule.period": periods}})
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_s_long_polls_answer_at_its_last_chunk_sharing_one_read_and_its_pages_equal_the_parquet()
 {
    let gate = Arc::new(Semaphore::new(0));
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::new(dir.path().join("db.sqlite"));
    // Re-reads 15 s apart: an answer sooner came from the chunk's notice.
    opts.limits.long_poll_reread = Duration::from_secs(15);
    let chunk_gate = gate.clone();
    opts.registry = Arc::new(move |state| {
        let mut r: JobRegistry = api::jobs::registry(state);
        let inner = r.get(TaskKind::BatchChunk).expect("the chunk job");
        r.register(
            TaskKind::BatchChunk,
            Arc::new(Gated {
                inner,
                gate: chunk_gate.clone(),
            }),
        );
        r
    });
    let s = TestServer::start(opts).await;
    let (status, sub) = s.post("/backtest/batch", DEMO, &grid()).await;
    assert_eq!(status, 202, "{sub}");
    let id = sub["task_id"].as_str().unwrap().to_string();
    let path = format!("/backtest/batch/{id}");
    assert!(
        eventually(Duration::from_secs(60), || async {
            s.get(&path, DEMO).await.1["status"] == "RUNNING"
        })
        .await,
        "fanned out"
    );
    // Rows before the end are a 409 naming the progress.
    let (status, early) = s.get(&format!("{path}/rows"), DEMO).await;
    assert_eq!(status, 409, "{early}");
    assert!(
        early["detail"].as_str().unwrap().contains("0 of 500 done"),
        "{early}"
    );

    // The waiters, each holding a long-poll place once it waits.
    let http = reqwest::Client::new();
    let polls: Vec<_> = (0..WAITERS)
        .map(|_| {
            let req = http
                .get(s.url(&format!("{path}?wait=20")))
                .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD));
            tokio::spawn(async move {
                let r = req.send().await.unwrap();
                let answered = chrono::Utc::now().naive_utc();
                let status = r.status().as_u16();
                (status, answered, r.json::<Value>().await.unwrap())
            })
        })
        .collect();
    let polls_held = || async { s.state.long_polls.in_use(DEMO_EMAIL).0 == WAITERS };
    assert!(eventually(Duration::from_secs(30), polls_held).await);

    // The first chunk ends: the waiters wake, see 250 done and wait on.
    gate.add_permits(1);
    assert!(
        eventually(Duration::from_secs(60), || async {
            s.get(&path, DEMO).await.1["done"] == 250
        })
        .await
    );
    assert!(eventually(Duration::from_secs(30), polls_held).await);
    assert!(polls.iter().all(|p| !p.is_finished()), "none answered yet");

    // The last chunk ends: every waiter answers at once, from one read.
    let reads_before = s.state.batch_reads.reads();
    gate.add_permits(1);
    let mut answers = Vec::new();
    for p in polls {
        answers.push(p.await.unwrap());
    }
    let reads = s.state.batch_reads.reads() - reads_before;
    let last_chunk = chunk_ends(s.state.tasks.as_ref(), &id)
        .await
        .into_iter()
        .max()
        .unwrap();
    let mut lates = Vec::new();
    for (status, answered, body) in &answers {
        assert_eq!((*status, body["status"].as_str()), (200, Some("SUCCESS")));
        assert_eq!(body["done"], 500);
        lates.push((*answered - last_chunk).to_std().unwrap_or_default());
    }
    // Woken by the last chunk's end, not a re-read (15 s): half of the
    // waiters within 250 ms of it (17-28 ms each in this debug build on an
    // idle machine, 63 ms with the suite and a type checker beside it), and
    // every one within a second, since a loaded machine can hold back a
    // wake-up that shares two cores with the other tests.
    lates.sort();
    println!(
        "embedded: answered {:?} to {:?} after the last chunk",
        lates[0],
        lates[WAITERS - 1]
    );
    assert!(
        lates[WAITERS / 2] < Duration::from_millis(250),
        "answered {lates:?} after the last chunk's outcome was stored"
    );
    assert!(
        lates[WAITERS - 1] < Duration::from_secs(1),
        "answered {lates:?} after the last chunk's outcome was stored"
    );
    assert!(
        reads <= 2,
        "{WAITERS} waiters woken together read the batch {reads} times"
    );

    // The rows a page at a time, across the chunks' boundary, equal the
    // Parquet export row by row, and the pages end with no cursor.
    let (status, _, pq) = {
        let r = http
            .get(s.url(&format!("{path}/results?format=parquet")))
            .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), (), r.bytes().await.unwrap())
    };
    assert_eq!(status, 200);
    let table = platform::marketdata::codec::from_parquet(pq).unwrap();
    let mut paged: Vec<Value> = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let query = match &cursor {
            Some(c) => format!("{path}/rows?limit=120&cursor={c}"),
            None => format!("{path}/rows?limit=120"),
        };
        let (status, page) = s.get(&query, DEMO).await;
        assert_eq!(status, 200, "{page}");
        assert_eq!(page["total"], 500);
        pages += 1;
        paged.extend(page["rows"].as_array().unwrap().iter().cloned());
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    assert_eq!((pages, paged.len(), table.num_rows()), (5, 500, 500));
    let index = platform::marketdata::columns::numbers(&table, "index").unwrap();
    let key = "entry.condition.rule.period,exit.condition.rule.period";
    let periods = platform::marketdata::columns::texts(&table, key).unwrap();
    for (k, row) in paged.iter().enumerate() {
        assert_eq!(row["index"], k);
        assert_eq!(index[k], Some(k as f64));
        assert_eq!(
            row["params"][key].as_str(),
            periods[k].as_deref(),
            "row {k}"
        );
        for metric in services::backtest::batch::METRICS {
            let column = platform::marketdata::columns::numbers(&table, metric).unwrap();
            assert_eq!(row[metric].as_f64(), column[k], "row {k}: {metric}");
        }
    }
    // A page is bounded, and a cursor is the server's.
    for (query, field) in [
        ("limit=0", "limit"),
        ("limit=10001", "limit"),
        ("cursor=abc", "cursor"),
    ] {
        let (status, body) = s.get(&format!("{path}/rows?{query}"), DEMO).await;
        assert_eq!(
            (status, body["field"].as_str()),
            (400, Some(field)),
            "{body}"
        );
    }
    let (_, past) = s.get(&format!("{path}/rows?cursor=500"), DEMO).await;
    assert_eq!(
        (past["rows"].as_array().map(Vec::len), &past["next_cursor"]),
        (Some(0), &Value::Null)
    );
    s.stop().await;
}

/// The finish times of a batch's chunks, as their worker stored them.
async fn chunk_ends(
    tasks: &dyn platform::tasks::TaskStore,
    id: &str,
) -> Vec<chrono::NaiveDateTime> {
    let record = tasks.get(id.parse().unwrap()).await.unwrap().unwrap();
    let mut ends = Vec::new();
    for chunk in record.result.as_ref().unwrap()["chunks"]
        .as_array()
        .unwrap()
    {
        let chunk = tasks
            .get(chunk.as_str().unwrap().parse().unwrap())
            .await
            .unwrap()
            .unwrap();
        ends.push(chunk.finished_at.unwrap());
    }
    ends
}

/// On the emulator with the worker in another process (the poller binary,
/// as the AWS stack runs it): no announcement reaches the HTTP side, and
/// full re-reads are 15 s apart, so a long-poll answered soon after the
/// last chunk heard of it from the outcomes counted to the batch. How soon
/// is printed: 16-36 ms with the test alone (target 50 ms), 61 ms once
/// while the whole suite shared the two cores and the emulator; the bound
/// asserted is the one a re-read could not meet.
#[tokio::test(flavor = "multi_thread")]
async fn on_the_emulator_a_batch_s_long_poll_answers_at_its_last_chunk_from_the_count() {
    use tests::runtime_api::{Killed, workspace_binaries};
    let tests::emulator::Deployment {
        names, mut state, ..
    } = tests::emulator::deployment().await;
    state.limits.long_poll_reread = Duration::from_secs(15);
    assert_eq!(
        state.limits.long_poll_check,
        Some(Duration::from_millis(10))
    );
    let (base, stop, server) = tests::server::serve_state(&state).await;
    let [poller] = workspace_binaries(["poller"]).await;
    let _poller = Killed(
        std::process::Command::new(poller)
            .envs(tests::emulator::function_env(&names))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let http = reqwest::Client::new();
    let sub: Value = http
        .post(format!("{base}/backtest/batch"))
        .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
        .json(&grid())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = sub["task_id"].as_str().expect("submitted").to_string();
    let (asked, answered, body) = loop {
        let asked = chrono::Utc::now().naive_utc();
        let r = http
            .get(format!("{base}/backtest/batch/{id}?wait=20"))
            .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
            .send()
            .await
            .unwrap();
        let answered = chrono::Utc::now().naive_utc();
        let body: Value = r.json().await.unwrap();
        match body["status"].as_str() {
            Some("SUCCESS") => break (asked, answered, body),
            Some("PENDING" | "RUNNING") => {}
            other => panic!("{other:?}: {body}"),
        }
    };
    assert_eq!(body["done"], 500);
    let last = chunk_ends(state.tasks.as_ref(), &id)
        .await
        .into_iter()
        .max()
        .unwrap();
    assert!(
        asked < last,
        "the long-poll was asked at {asked}, after the last chunk ended at {last}"
    );
    let late = (answered - last).to_std().unwrap_or_default();
    println!("emulator: answered {late:?} after the last chunk's outcome was stored");
    assert!(
        late < Duration::from_secs(1),
        "answered {late:?} after the last chunk's outcome was stored"
    );
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}
