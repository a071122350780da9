//! Lambda's SQS event source mapping where there is none: a queue's batches
//! handed to a function behind an invoke URL (the worker function under
//! `cargo lambda watch` on the local stack), with a number of invocations
//! in flight. See `worker::event_source` for what it does with the answers.

use std::time::Duration;
use worker::event_source::{EventSource, Invoke, Settings};

const HELP: &str = "\
event-source: hands a queue's messages to a function, as Lambda's SQS event
source mapping does, until SIGTERM or Ctrl-C.

Usage: event-source --invoke URL [--queue-url URL] [--batch-size N]
                    [--concurrency N] [--wait-seconds N] [--timeout-seconds N]

  --invoke URL           the function's invoke URL, e.g. cargo lambda watch's
                         http://127.0.0.1:9000/2015-03-31/functions/worker/invocations
  --queue-url URL        the queue ($MARKETLAB_QUEUE_URL, the job queue)
  --batch-size N         messages per invocation, 1 to 10 (10)
  --concurrency N        invocations in flight at once (1)
  --wait-seconds N       a receive's long-poll wait, 0 to 20 (20)
  --timeout-seconds N    an invocation's bound; the batch comes back after it (900)

The AWS environment (AWS_ENDPOINT_URL, AWS_REGION, credentials) as the
functions take it: `set -a; . <state>/env; set +a` on the local stack.
A message the function reports failed, or every message of a failed
invocation, is left to come back after the queue's visibility timeout;
the rest are deleted.
";

#[derive(Debug, PartialEq)]
struct Args {
    queue_url: String,
    invoke: String,
    batch_size: i32,
    concurrency: usize,
    wait_seconds: i32,
    timeout_seconds: u64,
}

/// `Ok(None)` for `--help`.
fn parse(mut args: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut a = Args {
        queue_url: std::env::var("MARKETLAB_QUEUE_URL").unwrap_or_default(),
        invoke: String::new(),
        batch_size: 10,
        concurrency: 1,
        wait_seconds: 20,
        timeout_seconds: 900,
    };
    fn number<T: std::str::FromStr>(flag: &str, v: Option<String>) -> Result<T, String> {
        let v = v.ok_or_else(|| format!("{flag} needs a value"))?;
        v.parse()
            .map_err(|_| format!("{flag}: '{v}' is not a whole number"))
    }
    while let Some(flag) = args.next() {
        match flag.as_str() {
            "-h" | "--help" => return Ok(None),
            "--queue-url" => {
                a.queue_url = args.next().ok_or("--queue-url needs a value")?;
            }
            "--invoke" => a.invoke = args.next().ok_or("--invoke needs a value")?,
            "--batch-size" => a.batch_size = number(&flag, args.next())?,
            "--concurrency" => a.concurrency = number(&flag, args.next())?,
            "--wait-seconds" => a.wait_seconds = number(&flag, args.next())?,
            "--timeout-seconds" => a.timeout_seconds = number(&flag, args.next())?,
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    if a.invoke.is_empty() {
        return Err("--invoke is required".into());
    }
    if a.queue_url.is_empty() {
        return Err("no queue: pass --queue-url or set MARKETLAB_QUEUE_URL".into());
    }
    if !(1..=10).contains(&a.batch_size) {
        return Err(format!("--batch-size {} is not 1 to 10", a.batch_size));
    }
    if a.concurrency == 0 {
        return Err("--concurrency must be at least 1".into());
    }
    Ok(Some(a))
}

#[tokio::main]
async fn main() {
    let args = match parse(std::env::args().skip(1)) {
        Ok(Some(a)) => a,
        Ok(None) => {
            print!("{HELP}");
            return;
        }
        Err(e) => {
            eprintln!("event-source: {e} (see event-source --help)");
            std::process::exit(2);
        }
    };
    platform::logging::init();
    let invoke = match Invoke::new(&args.invoke, Duration::from_secs(args.timeout_seconds)) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("event-source: {e}");
            std::process::exit(2);
        }
    };
    let stop = platform::worker::shutdown_signal();
    tokio::pin!(stop);
    // Nothing is received before the function listens: a batch it could
    // not take would be hidden for the visibility timeout.
    if !invoke.reachable().await {
        tracing::info!(invoke = %args.invoke, "waiting for the function to listen");
        loop {
            tokio::select! {
                _ = &mut stop => return,
                _ = tokio::time::sleep(Duration::from_millis(200)) => {}
            }
            if invoke.reachable().await {
                break;
            }
        }
    }
    let clients = aws_adapters::Clients::from_env().await;
    let settings = Settings {
        queue_url: args.queue_url.clone(),
        batch_size: args.batch_size,
        concurrency: args.concurrency,
        wait_seconds: args.wait_seconds,
    };
    let source = match EventSource::new(clients.sqs.clone(), settings).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("event-source: {e} (check AWS_ENDPOINT_URL, AWS_REGION and the credentials)");
            std::process::exit(1);
        }
    };
    tracing::info!(queue = %args.queue_url, invoke = %args.invoke, batch_size = args.batch_size,
        concurrency = args.concurrency, "event source started");
    if let Err(e) = source.run(invoke, stop).await {
        tracing::error!(error = %e, "event source stopped");
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Result<Option<Args>, String> {
        parse(line.split_whitespace().map(str::to_string))
    }

    #[test]
    fn flags_are_read_and_checked() {
        let a = args("--queue-url http://q --invoke http://127.0.0.1:9000/f --batch-size 5 --concurrency 4 --wait-seconds 1 --timeout-seconds 60")
            .unwrap()
            .unwrap();
        assert_eq!(
            a,
            Args {
                queue_url: "http://q".into(),
                invoke: "http://127.0.0.1:9000/f".into(),
                batch_size: 5,
                concurrency: 4,
                wait_seconds: 1,
                timeout_seconds: 60,
            }
        );
        assert_eq!(args("--help").unwrap(), None);
        for bad in [
            "--queue-url http://q",
            "--queue-url http://q --invoke http://i --batch-size 11",
            "--queue-url http://q --invoke http://i --batch-size x",
            "--queue-url http://q --invoke http://i --concurrency 0",
            "--queue-url http://q --invoke http://i --nope",
            "--queue-url http://q --invoke",
        ] {
            assert!(args(bad).is_err(), "{bad}");
        }
    }
}
