//! What a signal produces per bar, and the crossings most signals are made of.

/// The side a firing trades.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Long,
    Short,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Long => "Long",
            Direction::Short => "Short",
        }
    }

    pub fn parse(s: &str) -> Option<Direction> {
        [Direction::Long, Direction::Short]
            .into_iter()
            .find(|d| d.as_str() == s)
    }
}

/// Per bar: the signal fired there, and on which side, or not.
pub type Firings = Vec<Option<Direction>>;

/// Bars where `x` crosses from at or below `level` to above it (`up`), or
/// from at or above to below; NaN on either bar is no crossing.
pub fn crosses(x: &[f64], level: &[f64], up: bool) -> Vec<bool> {
    let mut out = vec![false; x.len()];
    for i in 1..x.len() {
        let (a, b, la, lb) = (x[i - 1], x[i], level[i - 1], level[i]);
        out[i] = if up {
            a <= la && b > lb
        } else {
            a >= la && b < lb
        };
    }
    out
}

/// `crosses` against a constant level.
pub fn crosses_level(x: &[f64], level: f64, up: bool) -> Vec<bool> {
    crosses(x, &vec![level; x.len()], up)
}

/// Long where `long` holds, Short where `short` holds (long first).
pub fn sides(long: &[bool], short: &[bool]) -> Firings {
    long.iter()
        .zip(short)
        .map(|(l, s)| match (l, s) {
            (true, _) => Some(Direction::Long),
            (_, true) => Some(Direction::Short),
            _ => None,
        })
        .collect()
}

/// One side only.
pub fn only(flags: &[bool], side: Direction) -> Firings {
    flags.iter().map(|f| f.then_some(side)).collect()
}

/// The bars a signal fired on.
pub fn fired_at(f: &Firings) -> Vec<usize> {
    f.iter()
        .enumerate()
        .filter_map(|(i, d)| d.map(|_| i))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crossings() {
        let x = [1.0, 2.0, 3.0, 2.0, f64::NAN, 3.0, 1.0];
        assert_eq!(
            crosses_level(&x, 2.0, true),
            vec![false, false, true, false, false, false, false]
        );
        assert_eq!(
            crosses_level(&x, 2.0, false),
            vec![false, false, false, false, false, false, true]
        );
        assert_eq!(
            sides(&[true, false, false], &[true, true, false]),
            vec![Some(Direction::Long), Some(Direction::Short), None]
        );
    }
}
