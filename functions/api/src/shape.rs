//! Bounds on the shape of a JSON body, checked on its bytes before anything
//! parses or walks it: how deep it nests, how many items one array or object
//! holds, and how many values it has in all. Parsers and the code after them
//! recurse on nesting and allocate per value, so a small body could otherwise
//! cost a stack or a heap out of proportion to its size.

use crate::error::ApiError;

/// Deepest nesting of arrays and objects accepted. A strategy nests 5 deep,
/// a batch of strategies 7.
pub const MAX_DEPTH: usize = 32;
/// Most items in one array or object: a batch holds at most 20,000 strategies.
pub const MAX_ITEMS: usize = 100_000;
/// Most values in one body (every number, string, array and object counts).
pub const MAX_VALUES: usize = 1_000_000;

/// One open array or object, and where it is; nothing is allocated per value.
struct Frame {
    array: bool,
    /// Items so far: in an array the latest one's index is `items - 1`.
    items: usize,
    /// In an object, where the latest key lies in the body.
    key: (usize, usize),
    /// An object expects a key next (after `{` and `,`).
    expect_key: bool,
}

/// The path of the open frames, `entry.condition[0].rule`, at most 200 bytes.
fn path(json: &[u8], frames: &[Frame]) -> String {
    let mut out = String::new();
    for f in frames.iter().filter(|f| f.items > 0) {
        if f.array {
            out.push_str(&format!("[{}]", f.items - 1));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            let (start, end) = f.key;
            out.push_str(&String::from_utf8_lossy(&json[start..end.min(start + 64)]));
        }
        if out.len() > 200 {
            let mut cut = 200;
            while !out.is_char_boundary(cut) {
                cut -= 1;
            }
            out.truncate(cut);
            out.push_str("...");
            break;
        }
    }
    if out.is_empty() { "body".into() } else { out }
}

/// Checks a JSON text against the bounds, naming the field where one is
/// passed. Malformed JSON passes here; the parser after it says what is wrong.
pub fn check(json: &[u8]) -> Result<(), ApiError> {
    check_within(json, MAX_DEPTH, MAX_ITEMS, MAX_VALUES)
}

pub fn check_within(
    json: &[u8],
    max_depth: usize,
    max_items: usize,
    max_values: usize,
) -> Result<(), ApiError> {
    let mut frames: Vec<Frame> = Vec::new();
    let mut values = 0usize;
    let mut i = 0;
    let too = |frames: &[Frame], what: String| ApiError::field(path(json, frames), what);
    // A value starts: count it, and an item of the enclosing array.
    let mut start_value = |frames: &mut Vec<Frame>| -> Result<(), ApiError> {
        values += 1;
        if values > max_values {
            return Err(ApiError::bad_request(format!(
                "the body holds more than {max_values} JSON values"
            )));
        }
        if let Some(f) = frames.last_mut()
            && f.array
        {
            f.items += 1;
            if f.items > max_items {
                return Err(too(
                    frames.as_slice(),
                    format!("a list of more than {max_items} items"),
                ));
            }
        }
        Ok(())
    };
    while i < json.len() {
        match json[i] {
            b'"' => {
                // To the closing quote, skipping escapes (memchr: long
                // strings such as an uploaded CSV pass at memory speed).
                let start = i + 1;
                i += 1;
                while let Some(k) = memchr::memchr2(b'"', b'\\', &json[i.min(json.len())..]) {
                    i += k;
                    if json[i] == b'"' {
                        break;
                    }
                    i += 2;
                }
                if i >= json.len() || json[i] != b'"' {
                    i = json.len();
                }
                match frames.last_mut() {
                    Some(f) if !f.array && f.expect_key => {
                        f.expect_key = false;
                        f.items += 1;
                        f.key = (start, i.min(json.len()));
                        if f.items > max_items {
                            return Err(too(
                                frames.as_slice(),
                                format!("an object of more than {max_items} fields"),
                            ));
                        }
                    }
                    _ => start_value(&mut frames)?,
                }
            }
            open @ (b'{' | b'[') => {
                start_value(&mut frames)?;
                if frames.len() >= max_depth {
                    return Err(too(
                        frames.as_slice(),
                        format!("nests deeper than {max_depth} levels"),
                    ));
                }
                frames.push(Frame {
                    array: open == b'[',
                    items: 0,
                    key: (0, 0),
                    expect_key: open == b'{',
                });
            }
            b'}' | b']' => {
                frames.pop();
            }
            b',' => {
                if let Some(f) = frames.last_mut()
                    && !f.array
                {
                    f.expect_key = true;
                }
            }
            b' ' | b'\t' | b'\r' | b'\n' | b':' => {}
            _ => {
                // A number, true, false or null: one value, to its end.
                start_value(&mut frames)?;
                while i + 1 < json.len()
                    && !matches!(
                        json[i + 1],
                        b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n' | b':' | b'"'
                    )
                {
                    i += 1;
                }
            }
        }
        i += 1;
    }
    Ok(())
}

/// Whether a body is JSON by its content type, or by its first byte when it
/// has none that says otherwise (clients that omit the header).
pub fn is_json(content_type: &str, body: &[u8]) -> bool {
    let ct = content_type.to_ascii_lowercase();
    if ct.contains("json") {
        return true;
    }
    if ct.starts_with("multipart/") || ct.starts_with("application/x-www-form-urlencoded") {
        return false;
    }
    matches!(
        body.iter().find(|b| !b.is_ascii_whitespace()),
        Some(b'{' | b'[')
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(json: &str) -> String {
        check(json.as_bytes()).unwrap_err().message
    }

    #[test]
    fn ordinary_bodies_pass() {
        for ok in [
            r#"{"symbol":"SPX","entry":{"rule_type":"SingleCondition","condition":{"signal":{"name":"a, b [c] {d}"},"rule":{"type_name":">","comparison_value":"1e3"}}}}"#,
            r#"[1, 2.5, -3e-2, true, false, null, "x\"y\\", {}, []]"#,
            "",
            "{",
            r#"{"unterminated": "str"#,
        ] {
            assert!(check(ok.as_bytes()).is_ok(), "{ok}");
        }
        let at_limit = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(check(at_limit.as_bytes()).is_ok());
    }

    #[test]
    fn depth_is_bounded_and_the_path_named() {
        let deep = format!(
            r#"{{"entry": {{"condition": [{}{}]}}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let m = message(&deep);
        assert!(m.starts_with("parameter 'entry.condition[0][0]"), "{m}");
        assert!(m.contains("deeper than 32"), "{m}");
        let objects = format!("{}1{}", r#"{"a":"#.repeat(5000), "}".repeat(5000));
        let m = message(&objects);
        assert!(m.starts_with("parameter 'a.a.a."), "{m}");
        // Brackets inside strings are text, not nesting.
        let text = format!(r#"{{"s": "{}"}}"#, "[{".repeat(1000));
        assert!(check(text.as_bytes()).is_ok());
    }

    #[test]
    fn width_and_count_are_bounded() {
        let wide = format!(r#"{{"strategies": [{}0]}}"#, "0,".repeat(MAX_ITEMS));
        let m = message(&wide);
        assert!(m.starts_with("parameter 'strategies["), "{m}");
        assert!(m.contains("more than 100000 items"), "{m}");
        let keys: Vec<String> = (0..=MAX_ITEMS).map(|k| format!("\"k{k}\":1")).collect();
        let m = message(&format!(r#"{{"grid": {{{}}}}}"#, keys.join(",")));
        assert!(m.starts_with("parameter 'grid"), "{m}");
        assert!(m.contains("more than 100000 fields"), "{m}");
        let many = format!("[{}]", ["[1,2,3]"; 10].join(","));
        assert!(check_within(many.as_bytes(), 8, 100, 30).is_err());
        assert!(check_within(many.as_bytes(), 8, 100, 41).is_ok());
    }

    #[test]
    fn json_is_told_by_type_or_first_byte() {
        assert!(is_json("application/json; charset=utf-8", b"x"));
        assert!(is_json("", b"  {\"a\":1}"));
        assert!(is_json("text/plain", b"[1]"));
        assert!(!is_json("application/x-www-form-urlencoded", b"{"));
        assert!(!is_json("multipart/form-data; boundary=x", b"["));
        assert!(!is_json("", b"a=1"));
    }
}
