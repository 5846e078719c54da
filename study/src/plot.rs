//! SVG plots: PUT and GET latency against size per provider (two panels,
//! every mode, ours solid with filled markers, the floor dashed with hollow
//! markers) and task-end cost against k (linear k axis).

use crate::proto::{op, Subject};
use crate::report::{bytes, Results};
use crate::stats::Res;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

struct Series {
    label: String,
    color: RGBColor,
    floor: bool,
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

fn bounds(series: &[Series]) -> Option<(f64, f64, f64, f64)> {
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in series.iter().flat_map(|s| s.points.iter()) {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    (x0 <= x1 && y0 > 0.0).then_some((x0, x1, y0, y1))
}

fn draw_series<'a, 'b: 'a, X: Ranged<ValueType = f64>>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, LogCoord<f64>>>,
    series: &[Series],
) -> Res<()> {
    for s in series {
        if s.points.is_empty() {
            continue;
        }
        let color = s.color;
        let floor = s.floor;
        let style = ShapeStyle::from(&color).stroke_width(2);
        let drawn = if floor {
            chart.draw_series(DashedLineSeries::new(s.points.clone(), 8, 5, style))?
        } else {
            chart.draw_series(LineSeries::new(s.points.clone(), style))?
        };
        // The legend shows what the plot shows: a dashed line with a hollow
        // marker for the floor, a solid line with a filled one for ours.
        drawn.label(s.label.clone()).legend(move |(x, y)| {
            let line = ShapeStyle::from(&color).stroke_width(2);
            let segs = if floor {
                [(-4, 2), (6, 12), (16, 22)]
            } else {
                [(-4, 6), (6, 14), (14, 22)]
            };
            let marker = if floor {
                ShapeStyle::from(&WHITE).filled()
            } else {
                color.filled()
            };
            EmptyElement::at((x, y))
                + PathElement::new(vec![(segs[0].0, 0), (segs[0].1, 0)], line)
                + PathElement::new(vec![(segs[1].0, 0), (segs[1].1, 0)], line)
                + PathElement::new(vec![(segs[2].0, 0), (segs[2].1, 0)], line)
                + Circle::new((9, 0), 4, marker)
                + Circle::new((9, 0), 4, line)
        });
        if floor {
            chart.draw_series(
                s.points
                    .iter()
                    .map(|p| Circle::new(*p, 4, ShapeStyle::from(&WHITE).filled())),
            )?;
            chart.draw_series(
                s.points
                    .iter()
                    .map(|p| Circle::new(*p, 4, ShapeStyle::from(&color).stroke_width(2))),
            )?;
        } else {
            chart.draw_series(s.points.iter().map(|p| Circle::new(*p, 4, color.filled())))?;
        }
    }
    Ok(())
}

fn legend<'a, 'b: 'a, X: Ranged<ValueType = f64>>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, LogCoord<f64>>>,
) -> Res<()> {
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    Ok(())
}

fn latency_panel(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    title: &str,
    series: &[Series],
) -> Res<()> {
    let Some((x0, x1, y0, y1)) = bounds(series) else {
        return Ok(());
    };
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(
            (x0 / 1.5..x1 * 1.5).log_scale().base(4.0),
            (y0 / 1.5..y1 * 4.0).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("bytes per operation (log)")
        .y_desc("time per operation, us (log)")
        .x_label_formatter(&|x| bytes(x.round() as u64))
        .draw()?;
    draw_series(&mut chart, series)?;
    legend(&mut chart)
}

fn task_end_plot(path: &Path, title: &str, series: &[Series]) -> Res<bool> {
    let Some((x0, x1, y0, y1)) = bounds(series) else {
        return Ok(false);
    };
    let root = SVGBackend::new(path, (960, 640)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart: ChartContext<'_, SVGBackend<'_>, Cartesian2d<RangedCoordf64, LogCoord<f64>>> =
        ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(72)
            .build_cartesian_2d(x0 - 0.5..x1 + 0.5, (y0 / 1.5..y1 * 4.0).log_scale())?;
    let ticks = (x1 - x0).round() as usize + 2;
    chart
        .configure_mesh()
        .x_labels(ticks)
        .x_desc("k = targets with PUTs before the task end (linear)")
        .y_desc("task end, us (log)")
        .x_label_formatter(&|x| {
            if (x - x.round()).abs() < 1e-6 {
                format!("{:.0}", x)
            } else {
                String::new()
            }
        })
        .draw()?;
    draw_series(&mut chart, series)?;
    legend(&mut chart)?;
    root.present()?;
    Ok(true)
}

fn points(r: &Results, prov: &str, mode: &str, subject: Subject, o: &str) -> Vec<(f64, f64)> {
    // Ours: a task through the public API; the floor: the floor of those
    // points.
    let mut v: Vec<(f64, f64)> = r
        .rows
        .iter()
        .filter(|x| {
            x.provider == prov
                && x.mode == mode
                && x.rec.op == o
                && x.rec.subject == Subject::RtTask
        })
        .filter_map(|x| {
            let row = if subject == Subject::Raw {
                r.floor(x)?
            } else {
                x
            };
            let xv = if o == op::BOUNDARY {
                x.rec.param as f64
            } else {
                x.rec.size as f64
            };
            Some((xv, Results::time(row)?.med))
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
        let mut put = Vec::new();
        let mut get = Vec::new();
        let mut bnd = Vec::new();
        for (i, m) in modes.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            for (o, name, into) in [
                (op::PUT_LAT, "PUT", &mut put),
                (op::GET_LAT, "GET", &mut get),
            ] {
                for (s, floor) in [(Subject::RtTask, false), (Subject::Raw, true)] {
                    into.push(Series {
                        label: format!(
                            "{m}: {name} {}",
                            if floor {
                                "floor (raw libfabric, matched)"
                            } else {
                                "ours (rt task)"
                            }
                        ),
                        color,
                        floor,
                        points: points(r, &prov, m, s, o),
                    });
                }
            }
            for (s, floor) in [(Subject::RtTask, false), (Subject::Raw, true)] {
                bnd.push(Series {
                    label: format!(
                        "{m}: {}",
                        if floor {
                            "floor: k 8 B reads"
                        } else {
                            "ours: rt.task_end_hook"
                        }
                    ),
                    color,
                    floor,
                    points: points(r, &prov, m, s, op::BOUNDARY),
                });
            }
        }
        let slug = slug(&prov);
        if put.iter().chain(&get).any(|s| !s.points.is_empty()) {
            let p = dir.join(format!("latency-{slug}.svg"));
            {
                let root = SVGBackend::new(&p, (1500, 620)).into_drawing_area();
                root.fill(&WHITE)?;
                let (left, right) = root.split_horizontally(750);
                latency_panel(
                    &left,
                    &format!("{prov}: PUT latency (solid: ours, dashed: floor)"),
                    &put,
                )?;
                latency_panel(
                    &right,
                    &format!("{prov}: GET latency (solid: ours, dashed: floor)"),
                    &get,
                )?;
                root.present()?;
            }
            written.push(p);
        }
        if bnd.iter().any(|s| !s.points.is_empty()) {
            let p = dir.join(format!("task-end-{slug}.svg"));
            if task_end_plot(
                &p,
                &format!(
                    "{prov}: task end after 8 B PUTs to k targets (solid: ours, dashed: floor)"
                ),
                &bnd,
            )? {
                written.push(p);
            }
        }
    }
    Ok(written)
}
