//! What a use case can answer instead of a result. The HTTP layer maps each
//! variant to its service's envelope in one place (`api::error`).

use platform::PortError;

/// A value the client sent that a use case cannot take. Every service, query
/// parameter or body member, words it the same way:
/// `parameter '<field>': <reason>`, where `field` is the name or path as the
/// client wrote it (`buy_rules.conditions[0].signal`) and `reason` quotes
/// the value sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("parameter '{field}': {reason}")]
pub struct FieldError {
    pub field: String,
    pub reason: String,
}

impl FieldError {
    /// The reason's quotes of the value sent are cut to
    /// [`MAX_QUOTED_CHARS`] (a 5 MB string is not sent back).
    pub fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        FieldError {
            field: shorten(field.into()),
            reason: shorten(reason.into()),
        }
    }

    pub fn required(field: impl Into<String>) -> Self {
        FieldError::new(field, "is required")
    }

    /// A field the request does not know, at `path` (`entry.condition.rule.perod`),
    /// naming the known field meant when one is close.
    pub fn unknown<'a>(path: impl Into<String>, known: impl IntoIterator<Item = &'a str>) -> Self {
        Self::unknown_as(path.into(), known, "unknown field")
    }

    /// A query parameter the operation does not declare, naming the one
    /// meant when one is close.
    pub fn unknown_parameter<'a>(
        name: impl Into<String>,
        known: impl IntoIterator<Item = &'a str>,
    ) -> Self {
        Self::unknown_as(name.into(), known, "unknown query parameter")
    }

    fn unknown_as<'a>(path: String, known: impl IntoIterator<Item = &'a str>, what: &str) -> Self {
        let sent = path.rsplit(['.', ']']).next().unwrap_or(&path);
        let reason = match closest(sent, known) {
            Some(meant) => format!("{what} (did you mean '{meant}'?)"),
            None => what.to_string(),
        };
        FieldError::new(path, reason)
    }

    /// A serde error at its path (`.` is the whole value): a missing field
    /// is named by its own path, an unknown one by its path with the field
    /// meant.
    pub fn from_serde<E: std::fmt::Display>(e: serde_path_to_error::Error<E>) -> Self {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        // A part that checks itself (a rule block) names the field below it.
        if let Some((field, reason)) = inner
            .strip_prefix("parameter '")
            .and_then(|rest| rest.split_once("': "))
        {
            let field = FieldError::new(field, reason);
            return match path.as_str() {
                "." => field,
                p => field.within(p),
            };
        }
        // serde names the Rust type it wanted; a client wrote an object.
        let inner = match inner
            .strip_prefix("invalid type: ")
            .and_then(|rest| rest.split_once(", expected struct "))
        {
            Some((got, _)) => format!("expected an object, got {got}"),
            None => inner,
        };
        if let Some((name, known)) = unknown_in(&inner, "unknown field `") {
            let at = match path.as_str() {
                "." => name.to_string(),
                p if p.ends_with(name) => p.to_string(),
                p => format!("{p}.{name}"),
            };
            return FieldError::unknown(at, known);
        }
        if let Some((name, known)) = unknown_in(&inner, "unknown variant `") {
            let field = if path == "." {
                "body".to_string()
            } else {
                path
            };
            let mut reason = format!("'{name}' is not one of {}", known.join(", "));
            if let Some(meant) = closest(name, known.iter().copied()) {
                reason.push_str(&format!(" (did you mean '{meant}'?)"));
            }
            return FieldError::new(field, reason);
        }
        let missing = inner
            .strip_prefix("missing field `")
            .and_then(|r| r.strip_suffix('`'));
        match (path.as_str(), missing) {
            (".", Some(field)) => FieldError::required(field),
            (_, Some(field)) => FieldError::required(format!("{path}.{field}")),
            (".", None) => FieldError::new("body", inner),
            _ => FieldError::new(path, inner),
        }
    }

    /// The same mistake inside a larger request: `strategies[2]` + `symbol`
    /// is `strategies[2].symbol`.
    pub fn within(mut self, parent: &str) -> Self {
        self.field = if self.field.starts_with('[') {
            format!("{parent}{}", self.field)
        } else {
            format!("{parent}.{}", self.field)
        };
        self
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The client sent a value the use case cannot take.
    #[error(transparent)]
    Invalid(#[from] FieldError),
    /// A ticker, task or series the client named does not exist.
    #[error("{0}")]
    NotFound(String),
    /// A symbol or ticker the client named in a field has no data: on every
    /// service the same 404, naming the field.
    #[error(transparent)]
    Unknown(FieldError),
    /// The account's plan does not cover what it asked for (data: 405).
    #[error("{0}")]
    NotSubscribed(String),
    /// The request conflicts with the account's state (a limit of things
    /// kept reached, a disabled endpoint): 409.
    #[error("{0}")]
    Conflict(String),
    /// The caller may not do this with the credentials it sent (a key
    /// granting scopes it does not hold): 403.
    #[error("{0}")]
    Forbidden(String),
    /// The data exist but cannot support the answer (too few sessions).
    #[error("insufficient data: {0}")]
    Insufficient(String),
    /// A port failed; the source is kept for the logs.
    #[error(transparent)]
    Port(#[from] PortError),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A request `T` read from JSON; a mistake names the path of its field
/// (`entry.condition.rule`). An array is refused: no request is one, and
/// serde would read a struct from it (`[]` as "every field left out").
///
/// Every request body passes here, so this is where a field the request
/// does not know is refused: types that list their fields
/// (`deny_unknown_fields`) name the field meant, and a field any other type
/// would skip is refused by its path all the same.
pub fn from_json<T: serde::de::DeserializeOwned>(
    value: serde_json::Value,
) -> Result<T, FieldError> {
    if value.is_array() {
        return Err(FieldError::new("body", "must be a JSON object"));
    }
    let mut skipped: Option<String> = None;
    let mut note = |path: serde_ignored::Path| {
        skipped.get_or_insert_with(|| dotted(&path));
    };
    // The path of a mistake is tracked only when there is one: the request
    // is read again to find it. Tracking it on every read took a tenth of
    // a large grid's time (each of its strategies is read here).
    let read = T::deserialize(serde_ignored::Deserializer::new(&value, &mut note));
    // An unknown field is named before any other mistake: it is often the
    // cause of the other (`comission` sent, `commission` missing).
    if let Some(path) = skipped {
        return Err(FieldError::unknown(path, []));
    }
    match read {
        Ok(t) => Ok(t),
        Err(_) => {
            let mut ignore = |_: serde_ignored::Path| {};
            let de = serde_ignored::Deserializer::new(&value, &mut ignore);
            Err(match serde_path_to_error::deserialize::<_, T>(de) {
                Err(e) => unknown_beside_missing::<T>(&value, &e)
                    .unwrap_or_else(|| FieldError::from_serde(e)),
                // Not expected: the same value read the same way.
                Ok(_) => FieldError::new("body", "could not be read"),
            })
        }
    }
}

/// The key serde never reached because a field beside it is missing: a rule
/// tagged by a field (`{"method": "top", "k": 2}`) whose tag is misspelt
/// (`metod`) fails on the missing tag before its other keys are read, so
/// the misspelling would go unnamed behind "`method` is required". The keys
/// the object may hold are asked of the type itself, on copies of the
/// request: the tag set to a value no variant has answers the variants,
/// each variant with a key no type has first answers its fields. A key none
/// of them holds is the mistake to name, with the field meant. `None`
/// unless the error is such a missing field and such a key is there.
fn unknown_beside_missing<T: serde::de::DeserializeOwned>(
    value: &serde_json::Value,
    error: &serde_path_to_error::Error<serde_json::Error>,
) -> Option<FieldError> {
    use serde_json::Value;
    const PROBE: &str = "\u{0}";
    let inner = error.inner().to_string();
    let missing = inner
        .strip_prefix("missing field `")?
        .strip_suffix('`')?
        .to_string();
    // The object missing the field, by the path of its members.
    let mut at: Vec<Result<usize, String>> = Vec::new();
    for segment in error.path() {
        match segment {
            serde_path_to_error::Segment::Map { key } => at.push(Err(key.clone())),
            serde_path_to_error::Segment::Seq { index } => at.push(Ok(*index)),
            _ => return None,
        }
    }
    fn object_at<'a>(
        v: &'a mut Value,
        at: &[Result<usize, String>],
    ) -> Option<&'a mut serde_json::Map<String, Value>> {
        at.iter()
            .try_fold(v, |v, step| match step {
                Ok(i) => v.get_mut(*i),
                Err(k) => v.get_mut(k.as_str()),
            })?
            .as_object_mut()
    }
    let sent: Vec<String> = object_at(&mut value.clone(), &at)?
        .keys()
        .cloned()
        .collect();
    // The request with the object replaced by `members`; what reading it
    // says of the probe (serde's list of names after "unknown ... `\0`").
    let names_when = |members: serde_json::Map<String, Value>, what: &str| {
        let mut copy = value.clone();
        *object_at(&mut copy, &at)? = members;
        let e = serde_path_to_error::deserialize::<_, T>(&copy).err()?;
        let said = e.into_inner().to_string();
        let (name, known) = unknown_in(&said, what)?;
        (name == PROBE).then(|| known.iter().map(|k| k.to_string()).collect::<Vec<_>>())
    };
    let mut tag = serde_json::Map::new();
    tag.insert(missing.clone(), Value::from(PROBE));
    let variants = names_when(tag, "unknown variant `")?;
    let mut known = vec![missing.clone()];
    for variant in &variants {
        let mut members = serde_json::Map::new();
        members.insert(PROBE.to_string(), Value::Null);
        members.insert(missing.clone(), Value::from(variant.as_str()));
        for name in names_when(members, "unknown field `").unwrap_or_default() {
            if !known.contains(&name) {
                known.push(name);
            }
        }
    }
    let stray = sent.iter().find(|k| !known.contains(k))?;
    let path = error.path().to_string();
    let path = match path.as_str() {
        "." => stray.clone(),
        p => format!("{p}.{stray}"),
    };
    Some(FieldError::unknown(path, known.iter().map(String::as_str)))
}

/// A skipped field's path in the requests' own notation (`strategies[2].x`).
fn dotted(path: &serde_ignored::Path) -> String {
    use serde_ignored::Path;
    match path {
        Path::Root => String::new(),
        Path::Seq { parent, index } => format!("{}[{index}]", dotted(parent)),
        Path::Map { parent, key } => match dotted(parent) {
            p if p.is_empty() => key.clone(),
            p => format!("{p}.{key}"),
        },
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => dotted(parent),
    }
}

/// The name and the known names of serde's "unknown field `x`, expected
/// one of `a`, `b`" (or "unknown variant ...").
fn unknown_in<'a>(message: &'a str, prefix: &str) -> Option<(&'a str, Vec<&'a str>)> {
    let rest = message.strip_prefix(prefix)?;
    let (name, expected) = rest.split_once('`')?;
    let known = expected.split('`').skip(1).step_by(2).collect();
    Some((name, known))
}

/// The known name closest to `sent`, when one is close enough to be what
/// was meant: at most a third of its letters edited (one for short names),
/// case aside. Names whose length alone puts them too far are not
/// measured, so a huge unknown key costs nothing beyond its reading.
pub fn closest<'a>(sent: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let near = |k: &str| sent.len().abs_diff(k.len()) <= (k.len().max(sent.len()) / 3).max(1);
    let mut known = known.into_iter().filter(|k| near(k)).peekable();
    known.peek()?;
    let sent_lower = sent.to_ascii_lowercase();
    known
        .map(|k| {
            let d = strsim::damerau_levenshtein(&sent_lower, &k.to_ascii_lowercase());
            (d, k)
        })
        .filter(|(d, k)| *d <= (k.len().max(sent.len()) / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// For `#[serde(deserialize_with = "whole_number")]`: a count as JSON may
/// write it, `2299` or `2299.0` (JSON has one number type).
pub fn whole_number<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<usize, D::Error> {
    use serde::Deserialize as _;
    let v = f64::deserialize(d)?;
    if v.fract() == 0.0 && (0.0..=1e15).contains(&v) {
        Ok(v as usize)
    } else {
        Err(serde::de::Error::custom(format!(
            "must be a whole number, got {v}"
        )))
    }
}

/// [`whole_number`] for an optional count (`null` or left out: none); with
/// `#[serde(default, deserialize_with = "whole_number_or_null")]`.
pub fn whole_number_or_null<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<usize>, D::Error> {
    use serde::Deserialize as _;
    match Option::<f64>::deserialize(d)? {
        None => Ok(None),
        Some(v) if v.fract() == 0.0 && (0.0..=1e15).contains(&v) => Ok(Some(v as usize)),
        Some(v) => Err(serde::de::Error::custom(format!(
            "must be a whole number, got {v}"
        ))),
    }
}

/// For `#[serde(default, deserialize_with = "not_null")]`: an optional
/// field may be left out for its default, but not sent as `null` (its
/// schema does not allow null, and a null that meant "default" would be a
/// guess).
pub fn not_null<'de, D, T>(d: D) -> std::result::Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    use serde::Deserialize as _;
    use serde::de::Error as _;
    match Option::<T>::deserialize(d)? {
        Some(v) => Ok(Some(v)),
        None => Err(D::Error::custom(
            "must not be null; leave the field out for its default",
        )),
    }
}

/// Most characters of a value an error message quotes.
pub const MAX_QUOTED_CHARS: usize = 200;

/// Most characters of an error message, whatever it quotes.
const MAX_MESSAGE_CHARS: usize = 1000;

/// `text` with every quoted run ('...', "..." or `...`) longer than
/// [`MAX_QUOTED_CHARS`] cut there, saying how much was left out; an
/// unclosed quote is cut the same way, and the whole kept to
/// 1,000 characters. Short messages come back unchanged.
pub fn shorten(text: String) -> String {
    if text.len() <= MAX_QUOTED_CHARS {
        return text;
    }
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find(['\'', '"', '`']) {
        let quote = rest.as_bytes()[at] as char;
        out.push_str(&rest[..=at]);
        let inside = &rest[at + 1..];
        match inside.find(quote) {
            Some(end) => {
                cut_into(&mut out, &inside[..end], MAX_QUOTED_CHARS);
                out.push(quote);
                rest = &inside[end + 1..];
            }
            None => {
                cut_into(&mut out, inside, MAX_QUOTED_CHARS);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    if out.chars().count() > MAX_MESSAGE_CHARS {
        let whole = std::mem::take(&mut out);
        cut_into(&mut out, &whole, MAX_MESSAGE_CHARS);
    }
    out
}

/// Appends `s`, or its first `most` characters and how many more there were.
fn cut_into(out: &mut String, s: &str, most: usize) {
    match s.char_indices().nth(most) {
        None => out.push_str(s),
        Some((byte, _)) => {
            let left = s[byte..].chars().count();
            out.push_str(&s[..byte]);
            out.push_str(&format!("... ({left} more characters)"));
        }
    }
}

/// A use case's error in a job: a port's failure keeps its retry class;
/// anything the request itself causes can never succeed.
impl From<Error> for platform::worker::JobError {
    fn from(e: Error) -> Self {
        match e {
            Error::Port(p) => p.into(),
            other => platform::worker::JobError::Permanent(other.to_string()),
        }
    }
}

impl Error {
    /// The field a client mistake names, if it is one.
    pub fn field(&self) -> Option<&str> {
        match self {
            Error::Invalid(e) | Error::Unknown(e) => Some(&e.field),
            _ => None,
        }
    }

    /// The symbol or ticker `name`, sent in `field`, has no data.
    pub fn unknown_symbol(field: impl Into<String>, name: &str) -> Self {
        Error::Unknown(FieldError::new(
            field,
            format!("'{name}' is not a known symbol"),
        ))
    }

    pub fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Invalid(FieldError::new(field, reason))
    }

    /// An integer that must lie in `[min, max]`.
    pub fn check_range(field: &str, value: i64, min: i64, max: i64) -> Result<i64> {
        if (min..=max).contains(&value) {
            Ok(value)
        } else {
            Err(Error::invalid(
                field,
                format!("must be between {min} and {max}, got {value}"),
            ))
        }
    }
}

#[cfg(test)]
mod shorten_tests {
    use super::*;

    #[test]
    fn a_long_quoted_value_is_cut_to_200_characters_and_the_rest_of_the_message_kept() {
        let value = "9".repeat(5_000_000);
        let e = FieldError::new("capital", format!("'{value}' is not a number"));
        assert_eq!(
            e.reason,
            format!(
                "'{}... (4999800 more characters)' is not a number",
                "9".repeat(200)
            )
        );
        let serde = format!("invalid type: string \"{}\", expected f64", "é".repeat(300));
        assert_eq!(
            shorten(serde),
            format!(
                "invalid type: string \"{}... (100 more characters)\", expected f64",
                "é".repeat(200)
            )
        );
        let unclosed = format!("starts '{}", "x".repeat(250));
        assert_eq!(
            shorten(unclosed),
            format!("starts '{}... (50 more characters)", "x".repeat(200))
        );
        // A long field name (a path built from the client's keys) too.
        assert!(
            FieldError::new("k".repeat(10_000), "is required")
                .field
                .len()
                < 1100
        );
    }

    #[test]
    fn short_and_unquoted_messages_are_unchanged() {
        let m = "'SPX' is not one of the operators of the spec (>, =, <, >=, <=, CrossAbove, CrossBelow, All-time High, All-time Low, Consecutive Days Above, Consecutive Days Below)";
        assert_eq!(shorten(m.to_string()), m);
        let long_plain = "word ".repeat(150);
        assert_eq!(shorten(long_plain.clone()), long_plain);
    }

    #[test]
    fn an_unknown_field_is_refused_by_its_path_with_the_field_meant() {
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Rule {
            period: Option<u32>,
            type_name: Option<String>,
        }
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Listed {
            commission: Option<f64>,
            rule: Option<Rule>,
            rules: Option<Vec<Rule>>,
        }
        let e = from_json::<Listed>(serde_json::json!({"comission": 0.001})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "parameter 'comission': unknown field (did you mean 'commission'?)"
        );
        let e = from_json::<Listed>(serde_json::json!({"rule": {"perod": 3}})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "parameter 'rule.perod': unknown field (did you mean 'period'?)"
        );
        let e = from_json::<Listed>(serde_json::json!({"rules": [{}, {"zzz": 1}]})).unwrap_err();
        assert_eq!(e.to_string(), "parameter 'rules[1].zzz': unknown field");
        // A type that does not list its fields refuses them all the same.
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Open {
            rule: Option<Rule>,
            items: Option<Vec<std::collections::BTreeMap<String, u8>>>,
        }
        let e = from_json::<Open>(serde_json::json!({"rule": {}, "extra": {"a": 1}})).unwrap_err();
        assert_eq!(e.to_string(), "parameter 'extra': unknown field");
        assert!(from_json::<Open>(serde_json::json!({"items": [{"any": 1}]})).is_ok());
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        enum Side {
            Long,
            Short,
        }
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Sided {
            side: Side,
        }
        let e = from_json::<Sided>(serde_json::json!({"side": "Lnog"})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "parameter 'side': 'Lnog' is not one of Long, Short (did you mean 'Long'?)"
        );
        assert_eq!(
            closest("start_yr", ["end_year", "start_year"]),
            Some("start_year")
        );
        assert_eq!(
            closest("rolling_window", ["roll_window", "benchmark"]),
            Some("roll_window")
        );
        assert_eq!(closest("zzz", ["symbol", "period"]), None);
        // A key far longer than every name is no misspelling of one.
        let huge = "commission".repeat(40_000);
        assert_eq!(closest(&huge, ["commission", "symbol"]), None);
        assert_eq!(closest("commisions", ["commission"]), Some("commission"));
    }

    /// An unknown key is named even beside a missing required one: inside
    /// a rule tagged by a field whose tag is misspelt (serde stops at the
    /// missing tag), and in a type that does not list its fields.
    #[test]
    fn an_unknown_field_is_named_before_a_missing_one_beside_it() {
        #[derive(Debug, serde::Deserialize)]
        #[serde(tag = "method", rename_all = "snake_case", deny_unknown_fields)]
        #[allow(dead_code)]
        enum Select {
            All,
            Top { k: usize, by: String },
            Bottom { k: usize, by: String },
        }
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Weights {
            select: Select,
        }
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Body {
            weights: Weights,
            more: Option<Vec<Weights>>,
        }
        let read = |v: serde_json::Value| from_json::<Body>(v).unwrap_err().to_string();
        assert_eq!(
            read(serde_json::json!({"weights": {"select": {"metod": "top", "k": 2, "by": "x"}}})),
            "parameter 'weights.select.metod': unknown field (did you mean 'method'?)"
        );
        assert_eq!(
            read(serde_json::json!({"weights": {"select": {"k": 2, "zzz": 1}}})),
            "parameter 'weights.select.zzz': unknown field"
        );
        let ok = serde_json::json!({"select": {"method": "all"}});
        assert_eq!(
            read(
                serde_json::json!({"weights": ok, "more": [ok, {"select": {"k": 2, "bye": "x", "mehtod": "top"}}]})
            ),
            "parameter 'more[1].select.bye': unknown field (did you mean 'by'?)"
        );
        // Without a stray key the missing one is what is said.
        assert_eq!(
            read(serde_json::json!({"weights": {"select": {"k": 2, "by": "x"}}})),
            "parameter 'weights.select.method': is required"
        );
        assert_eq!(
            read(serde_json::json!({"weights": {}})),
            "parameter 'weights.select': is required"
        );
        // The tagged rule as the whole body.
        assert_eq!(
            from_json::<Select>(serde_json::json!({"metod": "all"}))
                .unwrap_err()
                .to_string(),
            "parameter 'metod': unknown field (did you mean 'method'?)"
        );
        // A type that does not list its fields: the key it would skip comes first.
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Open {
            symbol: String,
        }
        assert_eq!(
            from_json::<Open>(serde_json::json!({"symbl": "SPX"}))
                .unwrap_err()
                .to_string(),
            "parameter 'symbl': unknown field"
        );
    }

    #[test]
    fn a_body_that_is_not_an_object_and_an_explicit_null_are_refused() {
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct R {
            #[serde(default, deserialize_with = "not_null")]
            signals: Option<Vec<String>>,
        }
        let e = from_json::<R>(serde_json::json!([])).unwrap_err();
        assert_eq!(e.to_string(), "parameter 'body': must be a JSON object");
        // A value stays a value (a body-less request reads as null).
        assert_eq!(
            from_json::<serde_json::Value>(serde_json::Value::Null).unwrap(),
            serde_json::Value::Null
        );
        let e = from_json::<R>(serde_json::json!({"signals": null})).unwrap_err();
        assert_eq!(e.field, "signals");
        assert!(e.reason.contains("must not be null"), "{e}");
        assert!(
            from_json::<R>(serde_json::json!({}))
                .unwrap()
                .signals
                .is_none()
        );
        assert_eq!(
            from_json::<R>(serde_json::json!({"signals": ["MA"]}))
                .unwrap()
                .signals,
            Some(vec!["MA".to_string()])
        );
    }
}
