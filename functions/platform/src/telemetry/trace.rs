//! One trace id from the request that submits a task, through the queue,
//! to the worker that runs it: W3C Trace Context (`traceparent`), read from
//! an X-Ray header (`Root=1-...`) where AWS gives one instead. The id is a
//! field of the request's and the task's log span, so every line logged
//! inside either carries it.

use std::future::Future;

/// A W3C trace context: the trace, this hop's span, whether it is sampled,
/// and (for a span made here) the span it is a child of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trace {
    pub trace_id: u128,
    pub span_id: u64,
    pub sampled: bool,
    pub parent: Option<u64>,
}

tokio::task_local! {
    static CURRENT: Trace;
}

fn random<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    getrandom::fill(&mut b).expect("system randomness");
    b
}

fn nonzero_span() -> u64 {
    loop {
        let s = u64::from_be_bytes(random());
        if s != 0 {
            return s;
        }
    }
}

impl Trace {
    /// A new trace, sampled.
    pub fn new() -> Self {
        let trace_id = loop {
            let t = u128::from_be_bytes(random());
            if t != 0 {
                break t;
            }
        };
        Trace {
            trace_id,
            span_id: nonzero_span(),
            sampled: true,
            parent: None,
        }
    }

    /// The same trace, one hop on: a new span, this one its parent.
    pub fn child(&self) -> Self {
        Trace {
            span_id: nonzero_span(),
            parent: Some(self.span_id),
            ..*self
        }
    }

    /// `00-<trace>-<span>-<flags>`; `None` for anything else, an all-zero
    /// id or the reserved version `ff` (the specification's rules).
    pub fn from_traceparent(s: &str) -> Option<Self> {
        let s = s.trim();
        let mut parts = s.split('-');
        let (version, trace, span, flags) =
            (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        let hex = |p: &str, n: usize| {
            p.len() == n && p.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        };
        if !hex(version, 2)
            || version == "ff"
            || !hex(trace, 32)
            || !hex(span, 16)
            || !hex(flags, 2)
        {
            return None;
        }
        // Version 00 has exactly four fields; later versions may add some.
        if version == "00" && parts.next().is_some() {
            return None;
        }
        let trace_id = u128::from_str_radix(trace, 16).ok()?;
        let span_id = u64::from_str_radix(span, 16).ok()?;
        let flags = u8::from_str_radix(flags, 16).ok()?;
        (trace_id != 0 && span_id != 0).then_some(Trace {
            trace_id,
            span_id,
            sampled: flags & 1 == 1,
            parent: None,
        })
    }

    /// An X-Ray trace header (`Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1`):
    /// the root's 8 + 24 hex digits are the W3C trace id, as X-Ray maps them.
    pub fn from_xray(s: &str) -> Option<Self> {
        let mut root = None;
        let mut parent = None;
        let mut sampled = true;
        for field in s.split(';') {
            match field.trim().split_once('=') {
                Some(("Root", v)) => root = Some(v),
                Some(("Parent", v)) => parent = u64::from_str_radix(v, 16).ok(),
                Some(("Sampled", v)) => sampled = v != "0",
                _ => {}
            }
        }
        let mut r = root?.split('-');
        let (version, time, rest) = (r.next()?, r.next()?, r.next()?);
        if version != "1" || time.len() != 8 || rest.len() != 24 || r.next().is_some() {
            return None;
        }
        let trace_id = u128::from_str_radix(&format!("{time}{rest}"), 16).ok()?;
        (trace_id != 0).then(|| Trace {
            trace_id,
            span_id: parent.filter(|p| *p != 0).unwrap_or_else(nonzero_span),
            sampled,
            parent: None,
        })
    }

    pub fn traceparent(&self) -> String {
        format!(
            "00-{:032x}-{:016x}-{:02x}",
            self.trace_id,
            self.span_id,
            u8::from(self.sampled)
        )
    }

    /// The trace id as logged: 32 lowercase hex digits.
    pub fn id(&self) -> String {
        format!("{:032x}", self.trace_id)
    }

    /// The same trace as an X-Ray header (`AWSTraceHeader` of a message).
    pub fn xray(&self) -> String {
        let id = self.id();
        format!(
            "Root=1-{}-{};Parent={:016x};Sampled={}",
            &id[..8],
            &id[8..],
            self.span_id,
            u8::from(self.sampled)
        )
    }
}

impl Default for Trace {
    fn default() -> Self {
        Trace::new()
    }
}

/// The trace of the request or task this code runs for, if any.
pub fn current() -> Option<Trace> {
    CURRENT.try_with(|t| *t).ok()
}

/// Runs `f` as part of `trace`: messages it queues carry the trace on.
pub async fn scope<F: Future>(trace: Trace, f: F) -> F::Output {
    CURRENT.scope(trace, f).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_round_trips_and_the_specification_s_example_reads() {
        let t = Trace::from_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
            .unwrap();
        assert_eq!(t.id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(t.span_id, 0x00f067aa0ba902b7);
        assert!(t.sampled);
        assert_eq!(
            t.traceparent(),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        );
        let n = Trace::new();
        assert_eq!(Trace::from_traceparent(&n.traceparent()), Some(n));
        let c = n.child();
        assert_eq!(c.trace_id, n.trace_id);
        assert_ne!(c.span_id, n.span_id);
        assert_eq!(c.parent, Some(n.span_id));
    }

    #[test]
    fn invalid_traceparents_are_refused() {
        for bad in [
            "",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
        ] {
            assert_eq!(Trace::from_traceparent(bad), None, "{bad}");
        }
    }

    #[test]
    fn an_x_ray_header_maps_to_the_same_trace_id() {
        // AWS's documented example header.
        let t = Trace::from_xray(
            "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1",
        )
        .unwrap();
        assert_eq!(t.id(), "5759e988bd862e3fe1be46a994272793");
        assert_eq!(t.span_id, 0x53995c3f42cd8ad8);
        assert_eq!(
            t.xray(),
            "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
        );
        assert!(
            !Trace::from_xray("Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=0")
                .unwrap()
                .sampled
        );
        assert_eq!(
            Trace::from_xray("Root=1-00000000-000000000000000000000000"),
            None
        );
        assert_eq!(Trace::from_xray("Parent=53995c3f42cd8ad8"), None);
        assert_eq!(
            Trace::from_xray("Root=2-5759e988-bd862e3fe1be46a994272793"),
            None
        );
    }

    #[tokio::test]
    async fn the_current_trace_is_the_scope_s() {
        assert_eq!(current(), None);
        let t = Trace::new();
        assert_eq!(scope(t, async { current() }).await, Some(t));
    }
}
