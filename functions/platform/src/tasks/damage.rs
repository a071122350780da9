//! Stored tasks that cannot be read whole (hand-edited, a spilled payload
//! gone): every store reads them field by field through [`TaskReader`], so
//! one bad field makes the task FAILED with the damage named instead of an
//! error that would answer 500 or hide the task from its owner's listing.

use super::{Task, TaskKind, TaskStatus};
use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;

/// How every damaged task's error begins.
pub const DAMAGED: &str = "the stored task is damaged";

/// The error a task damaged by `what` reads with.
pub fn damaged(what: impl fmt::Display) -> String {
    format!("{DAMAGED} ({what}); submit it again")
}

/// What of a stored task could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Damage {
    /// Each field that could not be read and why ("kind is missing"), in
    /// the order read; never the stored values themselves.
    pub what: Vec<String>,
    /// The kind could not be read: the task's `kind` is a stand-in, and it
    /// reads under every kind's routes of its owner.
    pub kind_unread: bool,
    /// The owner could not be read: nothing proves which tenant the task
    /// belongs to, so it is shown to none.
    pub owner_unread: bool,
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.what.join("; "))
    }
}

/// A stored field as a store found it, before it is read.
#[derive(Debug, Clone)]
pub enum Field<'a> {
    /// Not stored (an absent attribute, SQL NULL).
    Missing,
    Text(&'a str),
    /// A number, as its decimal text.
    Number(Cow<'a, str>),
    /// Stored as another type, named as the damage says it ("binary", "a list").
    Other(&'static str),
}

/// Reads a stored task a field at a time: a field that cannot be read is
/// noted as damage and given a stand-in, so the task still reads.
#[derive(Debug, Default)]
pub struct TaskReader {
    damage: Damage,
}

/// The kind an unreadable kind reads as; [`Damage::kind_unread`] says it is one.
const STAND_IN_KIND: TaskKind = TaskKind::StrategyBacktest;

impl TaskReader {
    pub fn new() -> Self {
        TaskReader::default()
    }

    /// Notes damage found outside the fields read here (a spilled payload gone).
    pub fn note(&mut self, what: impl Into<String>) {
        self.damage.what.push(what.into());
    }

    /// Text that must be stored.
    fn text<'a>(&mut self, name: &str, f: Field<'a>) -> Option<&'a str> {
        match f {
            Field::Text(s) => Some(s),
            Field::Missing => {
                self.note(format!("{name} is missing"));
                None
            }
            other => {
                self.wrong_type(name, other, "a string");
                None
            }
        }
    }

    /// Text that may be absent.
    fn optional_text<'a>(&mut self, name: &str, f: Field<'a>) -> Option<&'a str> {
        match f {
            Field::Missing => None,
            f => self.text(name, f),
        }
    }

    fn wrong_type(&mut self, name: &str, f: Field<'_>, wanted: &str) {
        let found = match f {
            Field::Text(_) => "a string",
            Field::Number(_) => "a number",
            Field::Other(t) => t,
            Field::Missing => "missing",
        };
        self.note(format!("{name} is {found}, not {wanted}"));
    }

    pub fn owner(&mut self, f: Field<'_>) -> String {
        match self.text("owner", f) {
            Some(s) if !s.is_empty() => s.to_string(),
            Some(_) => {
                self.note("owner is empty");
                self.damage.owner_unread = true;
                String::new()
            }
            None => {
                self.damage.owner_unread = true;
                String::new()
            }
        }
    }

    pub fn kind(&mut self, f: Field<'_>) -> TaskKind {
        let kind = self.text("kind", f).map(|s| {
            s.parse::<TaskKind>()
                .map_err(|_| self.note("kind is not a known task kind"))
        });
        match kind {
            Some(Ok(k)) => k,
            _ => {
                self.damage.kind_unread = true;
                STAND_IN_KIND
            }
        }
    }

    /// The status as stored; an unreadable one reads as FAILED.
    pub fn status(&mut self, f: Field<'_>) -> TaskStatus {
        // Exactly as stored: a listing's status filter compares the text.
        let known = |s: &str| {
            [
                TaskStatus::Pending,
                TaskStatus::Running,
                TaskStatus::Success,
                TaskStatus::Failed,
            ]
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or(())
        };
        match self.text("status", f).map(known) {
            Some(Ok(s)) => s,
            Some(Err(())) => {
                self.note("status is not PENDING, RUNNING, SUCCESS or FAILED");
                TaskStatus::Failed
            }
            None => TaskStatus::Failed,
        }
    }

    /// JSON stored as text; `required` fields must be there.
    pub fn json(&mut self, name: &str, f: Field<'_>, required: bool) -> Option<Value> {
        let text = if required {
            self.text(name, f)
        } else {
            self.optional_text(name, f)
        }?;
        serde_json::from_str(text)
            .map_err(|_| self.note(format!("{name} is not JSON")))
            .ok()
    }

    /// A time stored as text in `format`; `required` fields must be there.
    pub fn time(
        &mut self,
        name: &str,
        f: Field<'_>,
        format: &str,
        required: bool,
    ) -> Option<NaiveDateTime> {
        let text = if required {
            self.text(name, f)
        } else {
            self.optional_text(name, f)
        }?;
        NaiveDateTime::parse_from_str(text, format)
            .map_err(|_| self.note(format!("{name} is not a time")))
            .ok()
    }

    /// Optional text other than the above (the error).
    pub fn optional_string(&mut self, name: &str, f: Field<'_>) -> Option<String> {
        self.optional_text(name, f).map(str::to_string)
    }

    /// A whole number that may be absent (attempts, progress).
    pub fn number<T: std::str::FromStr>(&mut self, name: &str, f: Field<'_>) -> Option<T> {
        match f {
            Field::Missing => None,
            Field::Number(n) => n
                .trim()
                .parse()
                .map_err(|_| self.note(format!("{name} is not a whole number in range")))
                .ok(),
            other => {
                self.wrong_type(name, other, "a number");
                None
            }
        }
    }

    /// The damage found so far, if any.
    pub fn damage(&self) -> Option<&Damage> {
        (!self.damage.what.is_empty()).then_some(&self.damage)
    }

    /// The task read: as it is when nothing was damaged; otherwise FAILED
    /// with the damage as its error, nothing of a run left on it, and a log
    /// line naming `key` and the damage (never the stored values).
    pub fn finish(self, mut task: Task, key: &str) -> Task {
        if self.damage.what.is_empty() {
            return task;
        }
        let damage = self.damage;
        tracing::error!(
            key,
            damage = %damage,
            owner_unread = damage.owner_unread,
            "task item damaged: it reads as FAILED{}",
            if damage.owner_unread {
                ", shown to no tenant"
            } else {
                ""
            }
        );
        task.status = TaskStatus::Failed;
        task.error = Some(damaged(&damage));
        task.result = None;
        task.progress = None;
        task.lease_until = None;
        task.damage = Some(damage);
        task
    }
}

/// Logs a stored task skipped because its id cannot be read: nothing can
/// name it to its owner or a worker.
pub fn unreadable_id(key: &str, why: &str) {
    tracing::error!(
        key,
        damage = why,
        "task item without a readable id: left out"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::NewTask;

    fn task() -> Task {
        NewTask {
            owner: "o".into(),
            kind: TaskKind::CpmScan,
            params: Value::Null,
        }
        .into_pending()
    }

    #[test]
    fn each_damage_is_named_by_field_and_type_and_the_task_reads_failed() {
        let mut r = TaskReader::new();
        assert_eq!(r.kind(Field::Missing), STAND_IN_KIND);
        assert_eq!(r.status(Field::Number("5".into())), TaskStatus::Failed);
        assert_eq!(r.json("params", Field::Text("{x"), true), None);
        assert_eq!(r.number::<u32>("attempts", Field::Text("1")), None);
        assert_eq!(r.owner(Field::Text("me")), "me");
        assert_eq!(r.json("result", Field::Missing, false), None);
        let t = r.finish(task(), "k");
        let d = t.damage.clone().unwrap();
        assert_eq!(
            d.what,
            [
                "kind is missing",
                "status is a number, not a string",
                "params is not JSON",
                "attempts is a string, not a number"
            ]
        );
        assert!(d.kind_unread && !d.owner_unread);
        assert_eq!(t.status, TaskStatus::Failed);
        assert_eq!(
            t.error.as_deref(),
            Some(
                "the stored task is damaged (kind is missing; status is a number, not a string; \
                 params is not JSON; attempts is a string, not a number); submit it again"
            )
        );
    }

    #[test]
    fn a_whole_task_reads_as_it_is_and_an_unreadable_owner_is_no_ones() {
        let mut r = TaskReader::new();
        assert_eq!(r.status(Field::Text("RUNNING")), TaskStatus::Running);
        assert_eq!(
            r.number::<u8>("progress", Field::Number("40".into())),
            Some(40)
        );
        assert_eq!(r.kind(Field::Text("cpm_scan")), TaskKind::CpmScan);
        assert!(r.damage().is_none());
        let whole = task();
        assert_eq!(r.finish(whole.clone(), "k"), whole);

        let mut r = TaskReader::new();
        assert_eq!(r.owner(Field::Other("binary")), "");
        let t = r.finish(task(), "k");
        assert!(t.damage.as_ref().unwrap().owner_unread);
        assert!(!t.owned_by("") && !t.owned_by("o"));
    }
}
