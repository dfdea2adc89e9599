//! Inline SVG charts for the report: a grouped bar chart and a heat map.
//!
//! Written by hand rather than with the `plotters` crate: the report needs
//! two simple chart types, and a few string templates give byte-stable
//! output (deterministic runs), text that stays selectable and searchable,
//! native `<title>` tooltips, and no font-rendering dependency tree in the
//! build. Every value is drawn in [0, 1] (precision, recall, F1, Dice);
//! coordinates are printed with one decimal.

use std::fmt::Write;

use super::html::escape;

/// Height of the plotting area of the bar chart, in pixels (value 1.0).
pub const BAR_PLOT_HEIGHT: f64 = 240.0;
/// Width of one bar.
const BAR_WIDTH: f64 = 14.0;
/// Space between two groups of bars.
const GROUP_GAP: f64 = 18.0;
/// Room left of the plot for the axis labels.
const BAR_MARGIN_LEFT: f64 = 48.0;
/// Room above the plot for the legend.
const BAR_MARGIN_TOP: f64 = 40.0;
/// Room below the plot for the group labels.
const BAR_MARGIN_BOTTOM: f64 = 32.0;
/// Room right of the plot.
const BAR_MARGIN_RIGHT: f64 = 16.0;

/// Side of one heat-map cell.
const CELL: f64 = 46.0;
/// Room left of the heat map for the row labels.
const HEAT_MARGIN_LEFT: f64 = 76.0;
/// Room above the heat map for the slanted column labels.
const HEAT_MARGIN_TOP: f64 = 70.0;
/// Room below the heat map for the colour legend.
const HEAT_LEGEND_HEIGHT: f64 = 64.0;
/// Width of the colour legend's gradient bar.
const LEGEND_WIDTH: f64 = 220.0;

/// Heat-map colour of 0 (light blue-white) and of 1 (dark blue): a
/// single-hue scale, readable in grey print and for colour-blind readers.
const HEAT_LOW: (u8, u8, u8) = (0xf7, 0xfb, 0xff);
const HEAT_HIGH: (u8, u8, u8) = (0x08, 0x30, 0x6b);
/// Fill of a heat-map cell without a value.
const HEAT_MISSING: &str = "#e6e6e6";

/// One bar series: its name in the legend and tooltips, and its colour.
pub struct Series<'a> {
    pub name: &'a str,
    pub colour: &'a str,
}

/// One group of bars (one method): its label under the group and one value
/// per series; `None` draws no bar but a dash (e.g. no precision when the
/// method found no pair).
pub struct BarGroup {
    pub label: String,
    pub values: Vec<Option<f64>>,
}

/// The height of the bar for `value` in a plot `plot_height` tall: heights
/// are proportional to values; values outside [0, 1] are clamped, so one
/// wrong number cannot draw over the rest of the page.
pub fn bar_height(value: f64, plot_height: f64) -> f64 {
    value.clamp(0.0, 1.0) * plot_height
}

/// A grouped bar chart of values in [0, 1]: one group per entry of
/// `groups`, one bar per series, a legend above and a 0–1 axis with grid
/// lines at every quarter.
pub fn grouped_bar_chart(title: &str, series: &[Series], groups: &[BarGroup]) -> String {
    let group_width = series.len() as f64 * BAR_WIDTH + GROUP_GAP;
    let plot_width = groups.len() as f64 * group_width;
    let width = BAR_MARGIN_LEFT + plot_width + BAR_MARGIN_RIGHT;
    let height = BAR_MARGIN_TOP + BAR_PLOT_HEIGHT + BAR_MARGIN_BOTTOM;
    let base = BAR_MARGIN_TOP + BAR_PLOT_HEIGHT;
    let mut svg = open_svg(title, width, height);
    for quarter in 0..=4 {
        let v = quarter as f64 / 4.0;
        let y = base - bar_height(v, BAR_PLOT_HEIGHT);
        let _ = write!(
            svg,
            r##"<line x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{}"/><text x="{:.1}" y="{:.1}" text-anchor="end" font-size="11">{v:.2}</text>"##,
            BAR_MARGIN_LEFT,
            BAR_MARGIN_LEFT + plot_width,
            if quarter == 0 { "#444" } else { "#ddd" },
            BAR_MARGIN_LEFT - 6.0,
            y + 4.0,
        );
    }
    let mut legend_x = BAR_MARGIN_LEFT;
    for s in series {
        let _ = write!(
            svg,
            r##"<rect x="{legend_x:.1}" y="12.0" width="12.0" height="12.0" fill="{}"/><text x="{:.1}" y="22.0" font-size="12">{}</text>"##,
            escape(s.colour),
            legend_x + 16.0,
            escape(s.name),
        );
        legend_x += 24.0 + 8.0 * s.name.chars().count() as f64;
    }
    for (g, group) in groups.iter().enumerate() {
        let group_x = BAR_MARGIN_LEFT + g as f64 * group_width + GROUP_GAP / 2.0;
        for (position, (s, value)) in series.iter().zip(&group.values).enumerate() {
            let x = group_x + position as f64 * BAR_WIDTH;
            match value.filter(|v| v.is_finite()) {
                Some(v) => {
                    let h = bar_height(v, BAR_PLOT_HEIGHT);
                    let _ = write!(
                        svg,
                        r##"<rect class="bar" x="{x:.1}" y="{:.1}" width="{BAR_WIDTH:.1}" height="{h:.1}" fill="{}"><title>{} {}: {v:.3}</title></rect>"##,
                        base - h,
                        escape(s.colour),
                        escape(&group.label),
                        escape(s.name),
                    );
                }
                None => {
                    let _ = write!(
                        svg,
                        r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="11" fill="#888">–<title>{} {}: none</title></text>"##,
                        x + BAR_WIDTH / 2.0,
                        base - 3.0,
                        escape(&group.label),
                        escape(s.name),
                    );
                }
            }
        }
        let _ = write!(
            svg,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="12">{}</text>"##,
            group_x + series.len() as f64 * BAR_WIDTH / 2.0,
            base + 18.0,
            escape(&group.label),
        );
    }
    svg.push_str("</svg>");
    svg
}

/// The heat-map colour of `value` in [0, 1]: linear in RGB from
/// [`HEAT_LOW`] (0) to [`HEAT_HIGH`] (1), as `#rrggbb`; values outside
/// [0, 1] are clamped.
pub fn heat_colour(value: f64) -> String {
    let v = if value.is_finite() { value.clamp(0.0, 1.0) } else { 0.0 };
    let mix = |low: u8, high: u8| (low as f64 + (high as f64 - low as f64) * v).round() as u8;
    format!(
        "#{:02x}{:02x}{:02x}",
        mix(HEAT_LOW.0, HEAT_HIGH.0),
        mix(HEAT_LOW.1, HEAT_HIGH.1),
        mix(HEAT_LOW.2, HEAT_HIGH.2)
    )
}

/// A square heat map: `values[row][column]` for the `labels` on both axes,
/// each cell coloured by [`heat_colour`] and showing its value with two
/// decimals (white text on dark cells), grey with a dash where there is no
/// value, and a gradient legend from 0 to 1 named `legend` underneath. The
/// gradient's element id is fixed, so a page holds one heat map.
pub fn heat_map(title: &str, legend: &str, labels: &[String], values: &[Vec<Option<f64>>]) -> String {
    let n = labels.len() as f64;
    let width = (HEAT_MARGIN_LEFT + n * CELL + 24.0).max(HEAT_MARGIN_LEFT + LEGEND_WIDTH + 24.0);
    let height = HEAT_MARGIN_TOP + n * CELL + HEAT_LEGEND_HEIGHT;
    let mut svg = open_svg(title, width, height);
    for (i, label) in labels.iter().enumerate() {
        let centre = i as f64 * CELL + CELL / 2.0;
        let (column_x, column_y) = (HEAT_MARGIN_LEFT + centre, HEAT_MARGIN_TOP - 8.0);
        let _ = write!(
            svg,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="end" font-size="12">{}</text><text x="{column_x:.1}" y="{column_y:.1}" transform="rotate(-45 {column_x:.1} {column_y:.1})" font-size="12">{}</text>"##,
            HEAT_MARGIN_LEFT - 6.0,
            HEAT_MARGIN_TOP + centre + 4.0,
            escape(label),
            escape(label),
        );
    }
    for (r, row) in values.iter().enumerate().take(labels.len()) {
        for (c, value) in row.iter().enumerate().take(labels.len()) {
            let (x, y) = (HEAT_MARGIN_LEFT + c as f64 * CELL, HEAT_MARGIN_TOP + r as f64 * CELL);
            let (fill, text, ink) = match value.filter(|v| v.is_finite()) {
                Some(v) => (heat_colour(v), format!("{v:.2}"), if v > 0.5 { "#fff" } else { "#111" }),
                None => (HEAT_MISSING.to_string(), "–".to_string(), "#888"),
            };
            let _ = write!(
                svg,
                r##"<rect class="cell" x="{x:.1}" y="{y:.1}" width="{CELL:.1}" height="{CELL:.1}" fill="{fill}" stroke="#fff"><title>{} / {}: {text}</title></rect><text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="11" fill="{ink}">{text}</text>"##,
                escape(&labels[r]),
                escape(&labels[c]),
                x + CELL / 2.0,
                y + CELL / 2.0 + 4.0,
            );
        }
    }
    let legend_y = HEAT_MARGIN_TOP + n * CELL + 22.0;
    let _ = write!(
        svg,
        r##"<defs><linearGradient id="heat-gradient"><stop offset="0" stop-color="{}"/><stop offset="1" stop-color="{}"/></linearGradient></defs><rect x="{HEAT_MARGIN_LEFT:.1}" y="{legend_y:.1}" width="{LEGEND_WIDTH:.1}" height="12.0" fill="url(#heat-gradient)" stroke="#999"/>"##,
        heat_colour(0.0),
        heat_colour(1.0),
    );
    for (v, anchor) in [(0.0, "start"), (0.5, "middle"), (1.0, "end")] {
        let _ = write!(
            svg,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="{anchor}" font-size="11">{v:.1}</text>"##,
            HEAT_MARGIN_LEFT + v * LEGEND_WIDTH,
            legend_y + 26.0,
        );
    }
    let _ = write!(
        svg,
        r##"<text x="{:.1}" y="{:.1}" font-size="12">{}</text></svg>"##,
        HEAT_MARGIN_LEFT + LEGEND_WIDTH + 10.0,
        legend_y + 11.0,
        escape(legend),
    );
    svg
}

/// The opening `<svg>` tag of an inline chart of the given size, with an
/// accessible name.
fn open_svg(title: &str, width: f64, height: f64) -> String {
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" role="img" aria-label="{}" font-family="sans-serif">"##,
        escape(title)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values of attribute `name` of every element that starts with
    /// `element` (e.g. `<rect class="bar"`), in document order.
    fn attribute_values(svg: &str, element: &str, name: &str) -> Vec<f64> {
        svg.match_indices(element)
            .map(|(at, _)| {
                let tag = &svg[at..at + svg[at..].find('>').unwrap()];
                let start = tag.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
                tag[start..start + tag[start..].find('"').unwrap()].parse().unwrap()
            })
            .collect()
    }

    fn series() -> Vec<Series<'static>> {
        vec![Series { name: "P", colour: "#111111" }, Series { name: "R", colour: "#222222" }]
    }

    #[test]
    fn bar_heights_are_proportional_to_values() {
        assert_eq!(bar_height(0.5, 240.0), 120.0);
        assert_eq!(bar_height(0.25, 240.0), 60.0);
        assert_eq!(bar_height(1.7, 240.0), 240.0);
        assert_eq!(bar_height(-0.2, 240.0), 0.0);
        let groups = vec![
            BarGroup { label: "a0".into(), values: vec![Some(0.5), Some(0.25)] },
            BarGroup { label: "a1".into(), values: vec![Some(1.0), Some(0.1)] },
        ];
        let svg = grouped_bar_chart("quality", &series(), &groups);
        // 240 px for 1.0: 0.5 → 120, 0.25 → 60, 1.0 → 240, 0.1 → 24.
        assert_eq!(attribute_values(&svg, "<rect class=\"bar\"", "height"), vec![120.0, 60.0, 240.0, 24.0]);
        // Every bar stands on the axis at y = 40 (legend) + 240.
        let tops = attribute_values(&svg, "<rect class=\"bar\"", "y");
        assert_eq!(tops, vec![160.0, 220.0, 40.0, 256.0]);
        // Bars of one group sit side by side; groups are 2·14 + 18 apart.
        let xs = attribute_values(&svg, "<rect class=\"bar\"", "x");
        assert_eq!(xs, vec![57.0, 71.0, 103.0, 117.0]);
        assert!(svg.contains("<title>a0 R: 0.250</title>"));
    }

    #[test]
    fn a_missing_value_draws_a_dash_not_a_bar() {
        let groups = vec![BarGroup { label: "a7".into(), values: vec![None, Some(0.0)] }];
        let svg = grouped_bar_chart("quality", &series(), &groups);
        assert_eq!(attribute_values(&svg, "<rect class=\"bar\"", "height"), vec![0.0]);
        assert!(svg.contains("<title>a7 P: none</title>"));
    }

    #[test]
    fn heat_colours_of_zero_half_and_one() {
        assert_eq!(heat_colour(0.0), "#f7fbff");
        assert_eq!(heat_colour(1.0), "#08306b");
        // Midpoints: (247+8)/2 = 127.5 → 128, (251+48)/2 = 149.5 → 150, (255+107)/2 = 181.
        assert_eq!(heat_colour(0.5), "#8096b5");
        assert_eq!(heat_colour(2.0), "#08306b");
        assert_eq!(heat_colour(f64::NAN), "#f7fbff");
    }

    #[test]
    fn heat_map_cells_show_values_and_colours() {
        let labels = vec!["a0".to_string(), "x<y".to_string()];
        let values = vec![vec![Some(1.0), Some(0.0)], vec![Some(0.0), None]];
        let svg = heat_map("overlap", "Dice", &labels, &values);
        assert_eq!(svg.matches("<rect class=\"cell\"").count(), 4);
        assert!(svg.contains(r##"fill="#08306b" stroke="#fff"><title>a0 / a0: 1.00</title>"##), "{svg}");
        assert!(svg.contains(r##"fill="#f7fbff" stroke="#fff"><title>a0 / x&lt;y: 0.00</title>"##), "{svg}");
        assert!(svg.contains(r##"fill="#e6e6e6" stroke="#fff"><title>x&lt;y / x&lt;y: –</title>"##), "{svg}");
        assert!(!svg.contains("x<y"));
        // Cells are 46 px squares right of the labels and below the column names.
        assert_eq!(attribute_values(&svg, "<rect class=\"cell\"", "x"), vec![76.0, 122.0, 76.0, 122.0]);
        assert_eq!(attribute_values(&svg, "<rect class=\"cell\"", "y"), vec![70.0, 70.0, 116.0, 116.0]);
    }

    #[test]
    fn labels_are_escaped_in_charts() {
        let groups = vec![BarGroup { label: r#"<b>"&'"#.into(), values: vec![Some(0.5), None] }];
        let svg = grouped_bar_chart("a <title>", &series(), &groups);
        assert!(svg.contains("&lt;b&gt;&quot;&amp;&#39;"));
        assert!(!svg.contains("<b>"));
        assert!(svg.contains(r#"aria-label="a &lt;title&gt;""#));
    }
}
