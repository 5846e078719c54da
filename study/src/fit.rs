//! Least-squares fits of the MPI-3 RMA paper's model shapes (foMPI):
//! `latency = a + b * size` for PUT and GET, `boundary = a + b * k`.

/// A fitted line `y = a + b * x`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    /// Intercept.
    pub a: f64,
    /// Slope.
    pub b: f64,
    /// Coefficient of determination on the fitted points (unweighted).
    pub r2: f64,
    /// Points fitted.
    pub n: usize,
    /// Largest |residual| / y over the fitted points.
    pub max_rel_residual: f64,
}

/// Largest relative residual above which a fit is flagged as poor.
pub const MAX_REL_RESIDUAL: f64 = 0.5;

impl Line {
    /// What is wrong with the fit, if anything: a negative intercept
    /// (a time cannot start below zero: the fit is rejected), a negative
    /// slope (a cost that shrinks with size or k: noise), residuals above
    /// [`MAX_REL_RESIDUAL`] of the value (the line does not describe the
    /// points). Empty when the fit is usable.
    pub fn problems(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.a < 0.0 {
            v.push("REJECTED: intercept < 0".to_string());
        }
        if self.b < 0.0 {
            v.push("slope < 0".to_string());
        }
        if self.max_rel_residual > MAX_REL_RESIDUAL {
            v.push(format!(
                "residuals up to {:.0}%",
                self.max_rel_residual * 100.0
            ));
        }
        v
    }

    /// Whether the fit may be quoted (no problem at all).
    pub fn usable(&self) -> bool {
        self.problems().is_empty()
    }
}

/// Weighted least squares of `y = a + b x`; `None` with fewer than two
/// distinct x values.
pub fn weighted(xs: &[f64], ys: &[f64], ws: &[f64]) -> Option<Line> {
    let n = xs.len().min(ys.len()).min(ws.len());
    if n < 2 {
        return None;
    }
    let (mut sw, mut sx, mut sy, mut sxx, mut sxy) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for i in 0..n {
        let (x, y, w) = (xs[i], ys[i], ws[i]);
        sw += w;
        sx += w * x;
        sy += w * y;
        sxx += w * x * x;
        sxy += w * x * y;
    }
    let det = sw * sxx - sx * sx;
    if det.abs() <= f64::EPSILON * sw * sxx.max(1.0) {
        return None;
    }
    let b = (sw * sxy - sx * sy) / det;
    let a = (sy - b * sx) / sw;
    let mean = ys[..n].iter().sum::<f64>() / n as f64;
    let ss_tot: f64 = ys[..n].iter().map(|y| (y - mean).powi(2)).sum();
    let ss_res: f64 = (0..n).map(|i| (ys[i] - a - b * xs[i]).powi(2)).sum();
    let r2 = if ss_tot > 0.0 {
        1.0 - ss_res / ss_tot
    } else {
        1.0
    };
    let max_rel_residual = (0..n)
        .map(|i| ((ys[i] - a - b * xs[i]) / ys[i].abs().max(1e-12)).abs())
        .fold(0.0, f64::max);
    Some(Line {
        a,
        b,
        r2,
        n,
        max_rel_residual,
    })
}

/// Ordinary least squares (every point weighs the same): used for the
/// boundary, whose points are of one magnitude.
pub fn ordinary(xs: &[f64], ys: &[f64]) -> Option<Line> {
    weighted(xs, ys, &vec![1.0; xs.len()])
}

/// Least squares of relative residuals (weights 1/y^2): used for latency
/// against size, where sizes span five decades and plain least squares
/// would fit the 1 MiB points and leave the intercept (the small-message
/// latency) to chance.
pub fn relative(xs: &[f64], ys: &[f64]) -> Option<Line> {
    let ws: Vec<f64> = ys.iter().map(|y| 1.0 / y.max(1e-9).powi(2)).collect();
    weighted(xs, ys, &ws)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_line_is_recovered() {
        let xs: Vec<f64> = (0..10).map(|i| (8u64 << i) as f64).collect();
        let ys: Vec<f64> = xs.iter().map(|x| 1.5 + 0.25e-3 * x).collect();
        for l in [ordinary(&xs, &ys).unwrap(), relative(&xs, &ys).unwrap()] {
            assert!((l.a - 1.5).abs() < 1e-9, "{l:?}");
            assert!((l.b - 0.25e-3).abs() < 1e-12, "{l:?}");
            assert!((l.r2 - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn relative_fit_keeps_the_intercept() {
        // One outlier at the largest size drags OLS's intercept, much less
        // the relative fit's.
        let xs = [8.0, 64.0, 512.0, 4096.0, 1_048_576.0];
        let ys = [2.0, 2.0, 2.1, 2.9, 400.0];
        let r = relative(&xs, &ys).unwrap();
        assert!((r.a - 2.0).abs() < 0.2, "{r:?}");
    }

    #[test]
    fn bad_fits_are_named() {
        let xs = [1.0, 2.0, 3.0, 4.0];
        // Steep from a small first point: the line crosses zero before
        // x = 0, the fit is rejected.
        let l = ordinary(&xs, &[0.5, 2.0, 4.0, 6.0]).unwrap();
        let p = l.problems();
        assert!(
            l.a < 0.0 && p.iter().any(|x| x.starts_with("REJECTED")),
            "{p:?}"
        );
        assert!(!l.usable());
        // Falling with k: flagged.
        let l = ordinary(&xs, &[3.0, 2.0, 1.0, 0.5]).unwrap();
        assert!(l.problems().iter().any(|x| x == "slope < 0"));
        // Scattered around a flat line: residuals flagged.
        let l = ordinary(&xs, &[1.0, 10.0, 1.0, 10.0]).unwrap();
        assert!(l.problems().iter().any(|x| x.starts_with("residuals")));
        // A clean line is usable.
        assert!(ordinary(&xs, &[2.0, 3.0, 4.0, 5.0]).unwrap().usable());
    }

    #[test]
    fn degenerate_inputs() {
        assert!(ordinary(&[1.0], &[2.0]).is_none());
        assert!(ordinary(&[3.0, 3.0], &[1.0, 2.0]).is_none());
    }
}
