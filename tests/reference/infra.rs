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
        ("LimitsTableName", "MARKETLAB_LIMITS_TABLE"),
        ("UsageTableName", "MARKETLAB_USAGE_TABLE"),
        ("QueueName", "MARKETLAB_QUEUE_NAME"),
        ("BucketName", "MARKETLAB_BUCKET"),
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
            defaults.bucket.as_str()
        ),
        (
            names["MARKETLAB_TASKS_TABLE"].as_str(),
            names["MARKETLAB_ACCOUNTS_TABLE"].as_str(),
            names["MARKETLAB_LIMITS_TABLE"].as_str(),
            names["MARKETLAB_USAGE_TABLE"].as_str(),
            names["MARKETLAB_BUCKET"].as_str()
        )
    );
    // Every status change the worker needs is granted, and the SQS trigger reports partial failures.
    assert!(template.contains("FunctionResponseTypes: [ReportBatchItemFailures]"));
    assert!(template.contains("IndexName: by_owner"));
    // The nightly scanner runs after the close, New York time, and may write the bucket.
    assert!(template.contains("Binary: scanner-nightly"));
    assert!(template.contains("ScheduleExpression: cron(40 23 ? * MON-FRI *)"));
    assert!(template.contains("ScheduleExpressionTimezone: America/New_York"));
}
