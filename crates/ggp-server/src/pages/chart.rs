//! Charts drawn on the server as inline SVG (no script, nothing fetched): horizontal bars
//! (a value per named thing: a role's mean goal) and columns (a histogram). Each is an image
//! with a `<title>` and an `aria-label` that say what it shows, every bar has its value as
//! text beside it and a `<title>` of its own, and the page shows the same numbers in a table
//! nearby. They are drawn in a 400-unit-wide `viewBox` and scale to their box (width 100%),
//! so they fit a phone's screen; colours and sizes come from app.css (`svg.chart`).

use maud::{Markup, html};

/// The width of the drawing, in its own units.
const WIDTH: f64 = 400.0;

/// A bar: what it is, its value, the value as shown.
pub struct Bar {
    pub label: String,
    pub value: f64,
    pub shown: String,
}

/// A label cut to `max` characters (with an ellipsis), for the drawing; the full text is in
/// the bar's `<title>` and the table.
fn short(label: &str, max: usize) -> String {
    if label.chars().count() <= max {
        label.to_string()
    } else {
        let mut cut: String = label.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// The share of `scale` that `value` is, within 0 to 1.
fn share(value: f64, scale: f64) -> f64 {
    if scale > 0.0 && value.is_finite() {
        (value / scale).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// A bar per thing, across, against a scale from 0 to `scale` (100 for goals).
pub fn across(title: &str, bars: &[Bar], scale: f64) -> Markup {
    const ROW: f64 = 26.0;
    const LABEL: f64 = 112.0;
    const VALUE: f64 = 46.0;
    let room = WIDTH - LABEL - VALUE;
    let height = ROW * bars.len() as f64 + 8.0;
    html! {
        svg.chart.across role="img" aria-label=(title) viewBox=(format!("0 0 {WIDTH} {height}"))
            width="100%" preserveAspectRatio="xMinYMin meet" xmlns="http://www.w3.org/2000/svg" {
            title { (title) }
            @for (k, bar) in bars.iter().enumerate() {
                @let y = 4.0 + ROW * k as f64;
                @let w = room * share(bar.value, scale);
                g {
                    text.label x=(LABEL - 6.0) y=(y + ROW / 2.0 + 4.0) text-anchor="end" { (short(&bar.label, 14)) }
                    rect.track x=(LABEL) y=(y + 3.0) width=(room) height=(ROW - 8.0) rx="3" {}
                    rect.bar x=(LABEL) y=(y + 3.0) width=(format!("{w:.1}")) height=(ROW - 8.0) rx="3" {
                        title { (bar.label) ": " (bar.shown) }
                    }
                    text.value x=(LABEL + room + 6.0) y=(y + ROW / 2.0 + 4.0) { (bar.shown) }
                }
            }
        }
    }
}

/// A column per bar, up from a baseline, the tallest reaching the top: a histogram, each
/// bar's label under it and its value above it.
pub fn columns(title: &str, bars: &[Bar]) -> Markup {
    const HEIGHT: f64 = 180.0;
    const TOP: f64 = 18.0;
    const BASE: f64 = 150.0;
    let tallest = bars.iter().map(|b| b.value).fold(0.0, f64::max);
    let slot = WIDTH / bars.len().max(1) as f64;
    let width = (slot - 4.0).max(1.0);
    html! {
        svg.chart.columns role="img" aria-label=(title) viewBox=(format!("0 0 {WIDTH} {HEIGHT}"))
            width="100%" preserveAspectRatio="xMinYMin meet" xmlns="http://www.w3.org/2000/svg" {
            title { (title) }
            line.axis x1="0" y1=(BASE) x2=(WIDTH) y2=(BASE) {}
            @for (k, bar) in bars.iter().enumerate() {
                @let h = (BASE - TOP) * share(bar.value, tallest);
                @let x = slot * k as f64 + 2.0;
                g {
                    rect.bar x=(format!("{x:.1}")) y=(format!("{:.1}", BASE - h)) width=(format!("{width:.1}")) height=(format!("{h:.1}")) {
                        title { (bar.label) ": " (bar.shown) }
                    }
                    text.value x=(format!("{:.1}", x + width / 2.0)) y=(format!("{:.1}", BASE - h - 4.0)) text-anchor="middle" { (bar.shown) }
                    text.label x=(format!("{:.1}", x + width / 2.0)) y=(BASE + 16.0) text-anchor="middle" { (short(&bar.label, 7)) }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(label: &str, value: f64) -> Bar {
        Bar {
            label: label.into(),
            value,
            shown: format!("{value}"),
        }
    }

    #[test]
    fn a_chart_has_a_title_and_a_bar_with_its_value_per_thing() {
        let svg = across(
            "Mean goal per role",
            &[bar("xplayer", 50.0), bar("oplayer", 25.0)],
            100.0,
        )
        .into_string();
        assert!(
            svg.contains(r#"role="img" aria-label="Mean goal per role""#),
            "{svg}"
        );
        assert!(svg.contains("<title>Mean goal per role</title>"), "{svg}");
        assert_eq!(svg.matches(r#"class="bar""#).count(), 2, "{svg}");
        assert!(svg.contains(r#"width="121.0""#), "half of 242: {svg}");
        assert!(svg.contains("<title>oplayer: 25</title>"), "{svg}");
        assert!(svg.contains(r#"viewBox="0 0 400 60""#), "{svg}");
    }

    #[test]
    fn columns_reach_the_top_for_the_tallest_and_nothing_for_zero() {
        let svg = columns(
            "Lengths",
            &[bar("1–3", 4.0), bar("4–6", 0.0), bar("7–9", 2.0)],
        )
        .into_string();
        assert_eq!(svg.matches(r#"class="bar""#).count(), 3, "{svg}");
        assert!(
            svg.contains(r#"y="18.0" width="129.3" height="132.0""#),
            "{svg}"
        );
        assert!(svg.contains(r#"height="0.0""#), "{svg}");
        assert!(svg.contains(r#"height="66.0""#), "{svg}");
    }

    #[test]
    fn long_labels_are_cut_in_the_drawing_only() {
        let svg = across("Goals", &[bar("a-role-with-a-very-long-name", 1.0)], 100.0).into_string();
        assert!(svg.contains(">a-role-with-a…</text>"), "{svg}");
        assert!(
            svg.contains("<title>a-role-with-a-very-long-name: 1</title>"),
            "{svg}"
        );
    }
}
