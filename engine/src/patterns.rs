//! Price-pattern similarity: Pearson correlation of two windows' closes, the
//! second resampled to the first's length, as a score out of 100.

use crate::stats::pearson;

/// `values` linearly interpolated at `len` evenly spaced points from the
/// first value to the last.
pub fn resample(values: &[f64], len: usize) -> Vec<f64> {
    let n = values.len();
    if n == len || n == 0 {
        return values.to_vec();
    }
    if len == 1 || n == 1 {
        return vec![values[0]; len];
    }
    let step = (n - 1) as f64 / (len - 1) as f64;
    (0..len)
        .map(|j| {
            let x = j as f64 * step;
            let i = (x.floor() as usize).min(n - 2);
            let t = x - i as f64;
            values[i] + (values[i + 1] - values[i]) * t
        })
        .collect()
}

/// Similarity 0-100 of `candidate` to `template`: Pearson correlation x 100 of
/// the closes after resampling the candidate to the template's length, with
/// opposite shapes (negative correlation) scored 0. `None` when a window has
/// fewer than two points or is flat.
pub fn similarity(template: &[f64], candidate: &[f64]) -> Option<f64> {
    if template.len() < 2 || candidate.len() < 2 {
        return None;
    }
    let c = resample(candidate, template.len());
    pearson(template, &c).map(|r| (r * 100.0).max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resampling_keeps_the_ends_and_interpolates() {
        assert_eq!(resample(&[0.0, 10.0], 5), vec![0.0, 2.5, 5.0, 7.5, 10.0]);
        assert_eq!(
            resample(&[0.0, 4.0, 8.0, 12.0, 16.0], 3),
            vec![0.0, 8.0, 16.0]
        );
        // 4 points onto 3: positions 0, 1.5, 3.
        assert_eq!(resample(&[1.0, 2.0, 4.0, 8.0], 3), vec![1.0, 3.0, 8.0]);
    }

    #[test]
    fn scores() {
        let up = [1.0, 2.0, 3.0, 4.0];
        // The same line at another length and scale is a perfect match.
        assert!(
            (similarity(&up, &[10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0]).unwrap() - 100.0).abs()
                < 1e-12
        );
        assert_eq!(similarity(&up, &[4.0, 3.0, 2.0, 1.0]), Some(0.0));
        assert_eq!(similarity(&up, &[5.0, 5.0, 5.0]), None);
        // By hand: corr([1,2,3,4], [1,3,2,4]) = 0.8.
        assert!((similarity(&up, &[1.0, 3.0, 2.0, 4.0]).unwrap() - 80.0).abs() < 1e-12);
    }
}
