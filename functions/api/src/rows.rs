//! How many rows a data answer holds, for usage metering: a row is an
//! innermost JSON object (a record: one date's reading, one catalog entry);
//! an answer without objects (a list of codes) counts its top-level items.
//! One pass over the bytes, strings skipped with `memchr`, no parsing into values.

/// What a data answer returned, attached to it for metering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataVolume {
    pub rows: u64,
    pub bytes: u64,
}

pub fn json_rows(body: &[u8]) -> u64 {
    // Per open container: whether it is an object, holds a container, holds anything.
    let mut stack: Vec<(bool, bool, bool)> = Vec::new();
    let (mut innermost, mut top_items, mut top_nonempty) = (0u64, 0u64, false);
    let mut at = 0;
    while at < body.len() {
        let b = body[at];
        at += 1;
        match b {
            b'"' => {
                if let Some(open) = stack.last_mut() {
                    open.2 = true;
                }
                if stack.len() == 1 {
                    top_nonempty = true;
                }
                // Skip the string: jump from quote or backslash to the next.
                loop {
                    match memchr::memchr2(b'"', b'\\', &body[at..]) {
                        Some(k) if body[at + k] == b'\\' => at += k + 2,
                        Some(k) => {
                            at += k + 1;
                            break;
                        }
                        None => {
                            at = body.len();
                            break;
                        }
                    }
                }
            }
            b'{' | b'[' => {
                if let Some(parent) = stack.last_mut() {
                    parent.1 = true;
                    parent.2 = true;
                }
                if stack.len() == 1 {
                    top_nonempty = true;
                }
                stack.push((b == b'{', false, false));
            }
            b'}' | b']' => {
                if let Some((object, nested, filled)) = stack.pop()
                    && object
                    && filled
                    && !nested
                {
                    innermost += 1;
                }
            }
            b',' if stack.len() == 1 => top_items += 1,
            b' ' | b'\n' | b'\r' | b'\t' | b':' | b',' => {}
            _ => {
                if let Some(open) = stack.last_mut() {
                    open.2 = true;
                }
                if stack.len() == 1 {
                    top_nonempty = true;
                }
            }
        }
    }
    if innermost > 0 {
        innermost
    } else if top_nonempty {
        top_items + 1
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::json_rows;

    #[test]
    fn records_lists_and_legacy_bodies() {
        let history = br#"{"2026-01-02T00:00:00.000":{"value":1,"name":"a,}{"},"2026-01-05T00:00:00.000":{"value":2}}"#;
        assert_eq!(json_rows(history), 2);
        assert_eq!(
            json_rows(br#"[{"code":"SPX"},{"code":"NDX"},{"code":"RUT"}]"#),
            3
        );
        assert_eq!(json_rows(br#"["SPX","NDX"]"#), 2);
        assert_eq!(json_rows(br#"[]"#), 0);
        assert_eq!(json_rows(br#"{}"#), 0);
        assert_eq!(
            json_rows(br#"{"SPX":{"d1":{"v":1},"d2":{"v":2}},"NDX":{"d1":{"v":3}}}"#),
            3
        );
    }
}
