//! The cost model: measured work, and what it costs at the listed prices.

use tests::aws_meter::Usage;
use tests::runtime_api::{Invocation, answer_bytes};

/// The share of requests and tasks that land on a new instance (its start
/// and its first reads of the data): one in a thousand.
pub const COLD_SHARE: f64 = 1e-3;

#[derive(serde::Deserialize)]
pub struct Prices {
    pub as_of: String,
    pub region: String,
    pub lambda_arm64_per_gb_second: f64,
    pub lambda_per_request: f64,
    pub lambda_mb_per_vcpu: f64,
    pub lambda_log_bytes_per_invocation: f64,
    pub http_api_per_request: f64,
    pub http_api_bytes_per_request: f64,
    pub dynamodb_per_write_request_unit: f64,
    pub dynamodb_per_read_request_unit: f64,
    pub s3_per_get: f64,
    pub s3_per_put_copy_post_list: f64,
    pub sqs_per_request: f64,
    pub sqs_requests_per_worker_batch: f64,
    pub cloudwatch_logs_per_gb_ingested: f64,
    pub transfer_out_per_gb: f64,
}

/// infra/prices.json.
pub fn prices() -> Prices {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../infra/prices.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).expect("infra/prices.json")
}

/// Measured work: one or more invocations and what they called.
#[derive(Debug, Clone, Default)]
pub struct Work {
    pub invocations: f64,
    /// Wall time less the meter's own calls.
    pub ms: f64,
    pub cpu_ms: f64,
    /// Lambda's billed duration, estimated: this machine's wall time, plus
    /// the CPU time again for the part of a vCPU the memory size lacks.
    pub billed_ms: f64,
    pub gb_seconds: f64,
    pub log_bytes: f64,
    /// HTTP answers: API Gateway's 512 KB request units and bytes out.
    pub api_units: f64,
    pub out_bytes: f64,
    /// Worker batches the SQS event source mapping received and deleted.
    pub sqs_batches: f64,
    pub aws: Usage,
}

impl Work {
    /// SQS requests: the calls made, and the event source mapping's for each
    /// worker batch.
    pub fn sqs_requests(&self, p: &Prices) -> f64 {
        self.aws.sqs_requests as f64 + self.sqs_batches * p.sqs_requests_per_worker_batch
    }

    pub fn add_invocation(
        &mut self,
        p: &Prices,
        memory_mb: u32,
        inv: &Invocation,
        aws: Usage,
        http: bool,
    ) {
        let ms = (inv.ms - aws.metering_ms).max(0.0);
        let share = (p.lambda_mb_per_vcpu / memory_mb as f64 - 1.0).max(0.0);
        let billed = (ms + inv.cpu_ms * share).ceil().max(1.0);
        self.invocations += 1.0;
        self.ms += ms;
        self.cpu_ms += inv.cpu_ms;
        self.billed_ms += billed;
        self.gb_seconds += billed / 1e3 * memory_mb as f64 / 1024.0;
        self.log_bytes += inv.log_bytes as f64;
        if http {
            let bytes = answer_bytes(&inv.answer) as f64;
            self.api_units += (bytes / p.http_api_bytes_per_request).ceil().max(1.0);
            self.out_bytes += bytes;
        } else if inv.answer.get("batchItemFailures").is_some() {
            self.sqs_batches += 1.0;
        }
        self.aws.add(&aws);
    }

    pub fn add(&mut self, o: &Work) {
        self.invocations += o.invocations;
        self.ms += o.ms;
        self.cpu_ms += o.cpu_ms;
        self.billed_ms += o.billed_ms;
        self.gb_seconds += o.gb_seconds;
        self.log_bytes += o.log_bytes;
        self.api_units += o.api_units;
        self.out_bytes += o.out_bytes;
        self.sqs_batches += o.sqs_batches;
        self.aws.add(&o.aws);
    }

    pub fn scaled(&self, k: f64) -> Work {
        Work {
            invocations: self.invocations * k,
            ms: self.ms * k,
            cpu_ms: self.cpu_ms * k,
            billed_ms: self.billed_ms * k,
            gb_seconds: self.gb_seconds * k,
            log_bytes: self.log_bytes * k,
            api_units: self.api_units * k,
            out_bytes: self.out_bytes * k,
            sqs_batches: self.sqs_batches * k,
            aws: self.aws.scaled(k),
        }
    }

    /// `a - b`, floored at zero: what a cold run adds to a warm one.
    pub fn less(&self, b: &Work) -> Work {
        let mut d = self.clone();
        let mut neg = b.scaled(-1.0);
        // Counts floor at zero; the float fields may go negative, then floor.
        neg.aws = Usage::default();
        d.add(&neg);
        d.aws = self.aws.less(&b.aws);
        for f in [
            &mut d.invocations,
            &mut d.ms,
            &mut d.cpu_ms,
            &mut d.billed_ms,
            &mut d.gb_seconds,
            &mut d.log_bytes,
            &mut d.api_units,
            &mut d.out_bytes,
            &mut d.sqs_batches,
        ] {
            *f = f.max(0.0);
        }
        d
    }
}

/// Where a unit of work's dollars go.
#[derive(Debug, Clone, Default)]
pub struct Cost {
    pub lambda_compute: f64,
    pub lambda_requests: f64,
    pub api_gateway: f64,
    pub dynamodb: f64,
    pub s3: f64,
    pub sqs: f64,
    pub logs: f64,
    pub transfer: f64,
}

pub const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

impl Cost {
    pub fn of(w: &Work, p: &Prices) -> Cost {
        Cost {
            lambda_compute: w.gb_seconds * p.lambda_arm64_per_gb_second,
            lambda_requests: w.invocations * p.lambda_per_request,
            api_gateway: w.api_units * p.http_api_per_request,
            dynamodb: w.aws.dynamo_read_units * p.dynamodb_per_read_request_unit
                + w.aws.dynamo_write_units * p.dynamodb_per_write_request_unit,
            s3: w.aws.s3_gets as f64 * p.s3_per_get
                + w.aws.s3_puts as f64 * p.s3_per_put_copy_post_list,
            sqs: w.sqs_requests(p) * p.sqs_per_request,
            logs: (w.log_bytes + w.invocations * p.lambda_log_bytes_per_invocation) / GIB
                * p.cloudwatch_logs_per_gb_ingested,
            transfer: w.out_bytes / GIB * p.transfer_out_per_gb,
        }
    }

    pub fn parts(&self) -> [f64; 8] {
        [
            self.lambda_compute,
            self.lambda_requests,
            self.api_gateway,
            self.dynamodb,
            self.s3,
            self.sqs,
            self.logs,
            self.transfer,
        ]
    }

    pub fn total(&self) -> f64 {
        self.parts().iter().sum()
    }
}

pub const PARTS: [&str; 8] = [
    "Lambda compute",
    "Lambda requests",
    "API Gateway",
    "DynamoDB",
    "S3",
    "SQS",
    "CloudWatch Logs",
    "transfer out",
];

/// Warm work per unit plus the cold share of an instance's first one.
pub fn expected(warm: &Work, cold_extra: &Work) -> Work {
    let mut w = warm.clone();
    w.add(&cold_extra.scaled(COLD_SHARE));
    w
}

/// Dollars as the tables print them: cents and fractions of cents legible.
pub fn usd(x: f64) -> String {
    if x >= 100.0 {
        format!("${x:.0}")
    } else if x >= 1.0 {
        format!("${x:.2}")
    } else if x >= 0.01 {
        format!("${x:.3}")
    } else {
        format!("${x:.5}")
    }
}

/// A row of the breakdown table: `n` units of `w`, each part's share; the total.
pub fn cost_row(label: &str, n: f64, w: &Work, p: &Prices) -> f64 {
    let c = Cost::of(&w.scaled(n), p);
    let total = c.total();
    let cells: Vec<String> = c
        .parts()
        .iter()
        .map(|x| format!("{} ({:.0}%)", usd(*x), 100.0 * x / total.max(1e-12)))
        .collect();
    println!("| {label} | {} | **{}** |", cells.join(" | "), usd(total));
    total
}
