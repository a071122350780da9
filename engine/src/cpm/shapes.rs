//! The eight predefined chart patterns of the pattern matcher, each a
//! polyline of (time, level) points on the unit square. A shape becomes a
//! template of `m` bars by reading the polyline at `m` evenly spaced times
//! from 0 to 1; correlation ignores level and scale, so only the outline
//! matters.

/// A predefined pattern: its API name and outline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    pub name: &'static str,
    pub description: &'static str,
    pub points: &'static [(f64, f64)],
}

/// In the order of the spec's list.
pub const SHAPES: [Shape; 8] = [
    Shape {
        name: "head_and_shoulder_top",
        description: "a rise to a left shoulder, a higher head, a right shoulder as high as the left, then a fall through the neckline",
        points: &[
            (0.0, 0.0),
            (0.15, 0.6),
            (0.3, 0.3),
            (0.5, 1.0),
            (0.7, 0.3),
            (0.85, 0.6),
            (1.0, 0.0),
        ],
    },
    Shape {
        name: "head_and_shoulder_bottom",
        description: "the top pattern upside down: a left shoulder low, a lower head, a right shoulder, then a rise through the neckline",
        points: &[
            (0.0, 1.0),
            (0.15, 0.4),
            (0.3, 0.7),
            (0.5, 0.0),
            (0.7, 0.7),
            (0.85, 0.4),
            (1.0, 1.0),
        ],
    },
    Shape {
        name: "double_top",
        description: "two peaks at the same level with a trough between, then a fall",
        points: &[
            (0.0, 0.0),
            (0.25, 1.0),
            (0.5, 0.45),
            (0.75, 1.0),
            (1.0, 0.0),
        ],
    },
    Shape {
        name: "double_bottom",
        description: "two troughs at the same level with a peak between, then a rise",
        points: &[
            (0.0, 1.0),
            (0.25, 0.0),
            (0.5, 0.55),
            (0.75, 0.0),
            (1.0, 1.0),
        ],
    },
    Shape {
        name: "triple_tap",
        description: "three peaks at the same level (a triple top) with two troughs between, then a fall",
        points: &[
            (0.0, 0.0),
            (1.0 / 6.0, 1.0),
            (2.0 / 6.0, 0.5),
            (0.5, 1.0),
            (4.0 / 6.0, 0.5),
            (5.0 / 6.0, 1.0),
            (1.0, 0.0),
        ],
    },
    Shape {
        name: "rounding_bottom",
        description: "a slow fall that flattens and turns into a slow rise: the parabola (2t - 1)^2",
        points: &[
            (0.0, 1.0),
            (0.1, 0.64),
            (0.2, 0.36),
            (0.3, 0.16),
            (0.4, 0.04),
            (0.5, 0.0),
            (0.6, 0.04),
            (0.7, 0.16),
            (0.8, 0.36),
            (0.9, 0.64),
            (1.0, 1.0),
        ],
    },
    Shape {
        name: "ascending_channel",
        description: "a rise in swings between two parallel rising lines: higher highs and higher lows",
        points: &[
            (0.0, 0.0),
            (0.15, 0.3),
            (0.3, 0.15),
            (0.45, 0.45),
            (0.6, 0.3),
            (0.75, 0.6),
            (0.9, 0.45),
            (1.0, 0.7),
        ],
    },
    Shape {
        name: "descending_channel",
        description: "a fall in swings between two parallel falling lines: lower highs and lower lows",
        points: &[
            (0.0, 0.7),
            (0.15, 0.4),
            (0.3, 0.55),
            (0.45, 0.25),
            (0.6, 0.4),
            (0.75, 0.1),
            (0.9, 0.25),
            (1.0, 0.0),
        ],
    },
];

/// The pattern of that API name.
pub fn shape(name: &str) -> Option<&'static Shape> {
    SHAPES.iter().find(|s| s.name == name)
}

impl Shape {
    /// The outline read at `m` evenly spaced times from 0 to 1 (linear
    /// between the points); `m >= 2`.
    pub fn template(&self, m: usize) -> Vec<f64> {
        let pts = self.points;
        (0..m)
            .map(|k| {
                let t = k as f64 / (m - 1).max(1) as f64;
                let Some(seg) = pts.windows(2).position(|w| t < w[1].0) else {
                    return pts[pts.len() - 1].1;
                };
                let ((t0, y0), (t1, y1)) = (pts[seg], pts[seg + 1]);
                y0 + (y1 - y0) * (t - t0) / (t1 - t0)
            })
            .collect()
    }
}

/// Window lengths, in bars of the timeframe, that a predefined pattern is
/// searched at: about one, two, three and six months of daily bars; a
/// quarter, half a year and a year of weekly bars; one, two and three years
/// of monthly bars.
pub fn window_lengths(freq: crate::Frequency) -> &'static [usize] {
    match freq {
        crate::Frequency::Weekly => &[13, 26, 52],
        crate::Frequency::Monthly => &[12, 24, 36],
        _ => &[20, 40, 60, 120],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outlines_span_the_unit_square_and_read_linearly() {
        for s in &SHAPES {
            assert_eq!(s.points.first().unwrap().0, 0.0, "{}", s.name);
            assert_eq!(s.points.last().unwrap().0, 1.0, "{}", s.name);
            assert!(s.points.windows(2).all(|w| w[0].0 < w[1].0), "{}", s.name);
            let t = s.template(41);
            assert_eq!(t.len(), 41);
            assert_eq!(t[0], s.points[0].1);
            assert_eq!(t[40], s.points.last().unwrap().1);
            assert!(
                crate::cpm::Template::new(&t).is_some(),
                "{} is flat",
                s.name
            );
        }
        // Double top at 5 bars is exactly its points; at 9 bars, the midpoints.
        let d = shape("double_top").unwrap();
        assert_eq!(d.template(5), vec![0.0, 1.0, 0.45, 1.0, 0.0]);
        let t9 = d.template(9);
        assert!((t9[1] - 0.5).abs() < 1e-15 && (t9[3] - 0.725).abs() < 1e-15);
        assert!(shape("wedge").is_none());
    }

    #[test]
    fn mirrored_patterns_are_perfectly_anti_correlated() {
        use crate::stats::pearson;
        for (a, b) in [
            ("head_and_shoulder_top", "head_and_shoulder_bottom"),
            ("double_top", "double_bottom"),
            ("ascending_channel", "descending_channel"),
        ] {
            let r = pearson(
                &shape(a).unwrap().template(60),
                &shape(b).unwrap().template(60),
            )
            .unwrap();
            assert!((r + 1.0).abs() < 1e-12, "{a} vs {b}: {r}");
        }
    }
}
