//! SVG plots: latency against size per provider (every mode, ours solid,
//! raw floor dashed) and task-end cost against k.

use crate::proto::{op, Impl};
use crate::report::{bytes, Results};
use crate::stats::Res;
use plotters::prelude::*;
use std::path::Path;

struct Series {
    label: String,
    color: RGBColor,
    dashed: bool,
    marker_triangle: bool,
    points: Vec<(f64, f64)>,
}

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
];

fn draw(path: &Path, title: &str, x_desc: &str, log_x: bool, series: &[Series]) -> Res<()> {
    let pts = series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in pts {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if x0 > x1 || y0 <= 0.0 {
        return Ok(());
    }
    let (x0, x1) = if log_x {
        (x0 / 1.5, x1 * 1.5)
    } else {
        (x0 - 0.5, x1 + 0.5)
    };
    let (y0, y1) = (y0 / 1.5, y1 * 1.5);
    let root = SVGBackend::new(path, (960, 640)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(
            (x0..x1).log_scale().base(if log_x { 4.0 } else { 2.0 }),
            (y0..y1).log_scale(),
        )?;
    if log_x {
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc("time per operation (us)")
            .x_label_formatter(&|x| bytes(x.round() as u64))
            .draw()?;
    } else {
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc("time per operation (us)")
            .x_label_formatter(&|x| format!("{x:.0}"))
            .draw()?;
    }
    for s in series {
        if s.points.is_empty() {
            continue;
        }
        let color = s.color;
        let style = ShapeStyle::from(&color).stroke_width(if s.dashed { 1 } else { 2 });
        let drawn = if s.dashed {
            chart.draw_series(DashedLineSeries::new(s.points.clone(), 6, 4, style))?
        } else {
            chart.draw_series(LineSeries::new(s.points.clone(), style))?
        };
        let width = if s.dashed { 1 } else { 3 };
        drawn.label(s.label.clone()).legend(move |(x, y)| {
            PathElement::new(
                vec![(x, y), (x + 20, y)],
                ShapeStyle::from(&color).stroke_width(width),
            )
        });
        if s.marker_triangle {
            chart.draw_series(
                s.points
                    .iter()
                    .map(|p| TriangleMarker::new(*p, 4, color.filled())),
            )?;
        } else {
            chart.draw_series(s.points.iter().map(|p| Circle::new(*p, 3, color.filled())))?;
        }
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    root.present()?;
    Ok(())
}

fn points(r: &Results, prov: &str, mode: &str, imp: Impl, o: &str) -> Vec<(f64, f64)> {
    let mut v: Vec<(f64, f64)> = r
        .rows
        .iter()
        .filter(|x| x.provider == prov && x.mode == mode && x.imp == imp && x.rec.op == o)
        .map(|x| {
            let xv = if o == op::BOUNDARY {
                x.rec.param as f64
            } else {
                x.rec.size as f64
            };
            (xv, x.rec.us_per_op)
        })
        .filter(|(_, y)| *y > 0.0)
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

/// File-name form of a provider (`tcp;ofi_rxm` -> `tcp-ofi_rxm`).
pub fn slug(provider: &str) -> String {
    provider
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// Writes `latency-<provider>.svg` and `task-end-<provider>.svg` into
/// `dir`; returns the files written.
pub fn all(r: &Results, dir: &Path) -> Res<Vec<std::path::PathBuf>> {
    let mut written = Vec::new();
    let mut provs: Vec<String> = Vec::new();
    for (p, _) in &r.matrix {
        if !provs.contains(p) {
            provs.push(p.clone());
        }
    }
    for prov in provs {
        let modes: Vec<&String> = r
            .matrix
            .iter()
            .filter(|(p, _)| *p == prov)
            .map(|(_, m)| m)
            .collect();
        let mut lat = Vec::new();
        let mut bnd = Vec::new();
        for (i, m) in modes.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            for (o, name, tri) in [(op::PUT_LAT, "PUT", false), (op::GET_LAT, "GET", true)] {
                for imp in [Impl::Ours, Impl::Raw] {
                    lat.push(Series {
                        label: format!("{m} {name} {}", imp.as_str()),
                        color,
                        dashed: imp == Impl::Raw,
                        marker_triangle: tri,
                        points: points(r, &prov, m, imp, o),
                    });
                }
            }
            for imp in [Impl::Ours, Impl::Raw] {
                bnd.push(Series {
                    label: format!("{m} {}", imp.as_str()),
                    color,
                    dashed: imp == Impl::Raw,
                    marker_triangle: false,
                    points: points(r, &prov, m, imp, op::BOUNDARY),
                });
            }
        }
        let slug = slug(&prov);
        if lat.iter().any(|s| !s.points.is_empty()) {
            let p = dir.join(format!("latency-{slug}.svg"));
            draw(
                &p,
                &format!(
                    "{prov}: PUT/GET latency vs size (solid: pgas-comm, dashed: raw libfabric)"
                ),
                "bytes",
                true,
                &lat,
            )?;
            written.push(p);
        }
        if bnd.iter().any(|s| !s.points.is_empty()) {
            let p = dir.join(format!("task-end-{slug}.svg"));
            draw(
                &p,
                &format!("{prov}: task end after PUTs to k targets (dashed: k raw 8 B reads)"),
                "k (targets with dangling stores)",
                false,
                &bnd,
            )?;
            written.push(p);
        }
    }
    Ok(written)
}
