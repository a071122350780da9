//! infra/template.yaml passes cfn-lint, and its resource names are the ones
//! infra/names.env gives the emulator scripts and the functions.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

#[test]
fn template_passes_cfn_lint() {
    let lint = tests::reference::python().with_file_name("cfn-lint");
    let out = Command::new(&lint)
        .arg(repo().join("infra/template.yaml"))
        .output()
        .expect("cfn-lint runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && text.trim().is_empty(),
        "cfn-lint: {text}"
    );
}

#[test]
fn template_defaults_match_the_shared_names() {
    let names: HashMap<String, String> = std::fs::read_to_string(repo().join("infra/names.env"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains('='))
        .map(|l| {
            let (k, v) = l.split_once('=').unwrap();
            (k.trim().to_string(), v.trim().to_string())
        })
        .collect();
    let template = std::fs::read_to_string(repo().join("infra/template.yaml")).unwrap();
    let default_of = |param: &str| {
        let at = template
            .find(&format!("\n  {param}:\n"))
            .unwrap_or_else(|| panic!("parameter {param}"));
        let rest = &template[at..];
        let line = rest
            .lines()
            .find(|l| l.trim_start().starts_with("Default:"))
            .unwrap();
        line.trim_start()
            .trim_start_matches("Default:")
            .trim()
            .to_string()
    };
    for (param, name) in [
        ("TasksTableName", "MARKETLAB_TASKS_TABLE"),
        ("AccountsTableName", "MARKETLAB_ACCOUNTS_TABLE"),
        ("KeysTableName", "MARKETLAB_KEYS_TABLE"),
        ("LimitsTableName", "MARKETLAB_LIMITS_TABLE"),
        ("UsageTableName", "MARKETLAB_USAGE_TABLE"),
        ("QueueName", "MARKETLAB_QUEUE_NAME"),
        ("BucketName", "MARKETLAB_BUCKET"),
        ("WebhooksTableName", "MARKETLAB_WEBHOOKS_TABLE"),
        ("WebhookQueueName", "MARKETLAB_WEBHOOK_QUEUE_NAME"),
        ("IngestQueueName", "MARKETLAB_INGEST_QUEUE_NAME"),
    ] {
        assert_eq!(default_of(param), names[name], "{param}");
    }
    // The functions' defaults agree too.
    let defaults = aws_adapters::Names::from_env();
    assert_eq!(
        (
            defaults.tasks_table.as_str(),
            defaults.accounts_table.as_str(),
            defaults.limits_table.as_str(),
            defaults.usage_table.as_str(),
            defaults.bucket.as_str(),
            defaults.webhooks_table.as_str()
        ),
        (
            names["MARKETLAB_TASKS_TABLE"].as_str(),
            names["MARKETLAB_ACCOUNTS_TABLE"].as_str(),
            names["MARKETLAB_LIMITS_TABLE"].as_str(),
            names["MARKETLAB_USAGE_TABLE"].as_str(),
            names["MARKETLAB_BUCKET"].as_str(),
            names["MARKETLAB_WEBHOOKS_TABLE"].as_str()
        )
    );
    // Every status change the worker needs is granted, and the SQS trigger reports partial failures.
    assert!(template.contains("FunctionResponseTypes: [ReportBatchItemFailures]"));
    assert!(template.contains("IndexName: by_owner"));
    // The nightly scanner runs after the close, New York time, and may write the bucket.
    assert!(template.contains("Binary: scanner-nightly"));
    assert!(template.contains("ScheduleExpression: cron(40 23 ? * MON-FRI *)"));
    assert!(template.contains("ScheduleExpressionTimezone: America/New_York"));
    // Webhook deliveries: their own function, queue and dead-letter queue.
    assert!(template.contains("Binary: webhooks"));
    assert!(template.contains("deadLetterTargetArn: !GetAtt WebhookDeadLetterQueue.Arn"));
    assert!(template.contains("IndexName: by_kind"));
}

/// The HTTP API's routes in the template: (function, method, path).
fn template_routes() -> Vec<(String, String, String)> {
    let template = std::fs::read_to_string(repo().join("infra/template.yaml")).unwrap();
    let mut function = String::new();
    let mut routes = Vec::new();
    for line in template.lines() {
        if let Some(name) = line.strip_prefix("  ").and_then(|l| l.strip_suffix(':'))
            && !name.starts_with(' ')
        {
            function = name.to_string();
        }
        if !line.contains("Type: HttpApi") {
            continue;
        }
        let field = |key: &str| {
            let rest =
                &line[line.find(key).unwrap_or_else(|| panic!("{key} in {line}")) + key.len()..];
            rest.trim_start()
                .split([',', ' '])
                .next()
                .unwrap()
                .trim_matches('"')
                .to_string()
        };
        routes.push((function.clone(), field("Method:"), field("Path:")));
    }
    routes
}

/// Whether an HTTP API route matches a documented path (`{x}` one segment,
/// `{proxy+}` one or more).
fn route_matches(route: &str, path: &str) -> bool {
    let (r, p): (Vec<&str>, Vec<&str>) = (route.split('/').collect(), path.split('/').collect());
    for (i, seg) in r.iter().enumerate() {
        if *seg == "{proxy+}" {
            return p.len() > i;
        }
        match p.get(i) {
            Some(s) if s == seg || (seg.starts_with('{') && !s.is_empty()) => {}
            _ => return false,
        }
    }
    r.len() == p.len()
}

/// Every operation of the API description reaches, through the template's
/// HTTP API, the function of the service that serves it (report pages and
/// views included), and no operation is claimed by two functions.
#[test]
fn every_documented_operation_is_routed_to_its_function() {
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join("docs/openapi.json")).unwrap())
            .unwrap();
    let routes = template_routes();
    assert!(routes.len() > 20, "{routes:?}");
    let mut checked = 0;
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            let functions: std::collections::BTreeSet<&str> = routes
                .iter()
                .filter(|(_, m, r)| {
                    (m == "ANY" || m.eq_ignore_ascii_case(method)) && route_matches(r, path)
                })
                .map(|(f, _, _)| f.as_str())
                .collect();
            let want = match op["tags"][0].as_str().unwrap() {
                "backtest" | "public" => "BacktestFunction",
                "analytics" => "AnalyticsFunction",
                "data" => "DataFunction",
                other => panic!("tag {other}"),
            };
            assert_eq!(
                functions.into_iter().collect::<Vec<_>>(),
                vec![want],
                "{} {path}",
                method.to_uppercase()
            );
            checked += 1;
        }
    }
    println!("{checked} operations routed to their functions");
}

/// Every plan's monthly compute limit, at the worst a counted minute can
/// cost (the template's worker memory, the listed price, 60 tasks' fixed
/// costs), stays within the plan's budget.
#[test]
fn plan_compute_limits_stay_within_their_budgets() {
    use tests::plan_costs::{
        MONTHLY_COMPUTE_BUDGET_USD, counted_minute_at_most, lambda_gb_second_price,
    };
    let minute = counted_minute_at_most(
        tests::runtime_api::template_memory_mb("worker"),
        lambda_gb_second_price(),
    );
    for plan in platform::accounts::PLANS {
        let budget = MONTHLY_COMPUTE_BUDGET_USD
            .iter()
            .find(|(code, _)| *code == plan.code)
            .unwrap_or_else(|| panic!("plan {} has no compute budget", plan.code))
            .1;
        let limit = platform::quota::default_limits(plan.code).monthly_compute_minutes;
        let worst = limit as f64 * minute;
        assert!(
            worst <= budget,
            "plan {}: {limit} minutes may cost ${worst:.2}, over its ${budget:.2} budget",
            plan.code
        );
    }
}
