//! Charts as inline SVG: bars scaled to the largest value, each chart titled and described
//! for screen readers (`role="img"`, `<title>`, `<desc>`); the page puts the same numbers in
//! a table beside it. No script, no font, no external reference.

use std::fmt::Write as _;

use super::text::{escape, number};

/// One bar: its label and value.
pub(crate) struct Bar<'a> {
    pub label: &'a str,
    pub value: u64,
}

/// Longest label drawn (the table beside the chart has it whole).
const LABEL_CHARS: usize = 30;
const ROW: u32 = 22;
const WIDTH: u32 = 640;
const LABEL_WIDTH: u32 = 230;

fn short(label: &str) -> String {
    if label.chars().count() <= LABEL_CHARS {
        return label.to_string();
    }
    let mut s: String = label.chars().take(LABEL_CHARS - 1).collect();
    s.push('…');
    s
}

/// Horizontal bars, one a row, the value written after each.
pub(crate) fn bars(id: &str, title: &str, desc: &str, bars: &[Bar]) -> String {
    let max = bars.iter().map(|b| b.value).max().unwrap_or(0).max(1);
    let height = ROW * bars.len() as u32 + 8;
    let mut s = open(id, title, desc, WIDTH, height);
    let span = (WIDTH - LABEL_WIDTH - 90) as f64;
    for (i, b) in bars.iter().enumerate() {
        let y = 4 + ROW * i as u32;
        let w = (b.value as f64 / max as f64 * span).max(if b.value > 0 { 1.0 } else { 0.0 });
        let _ = write!(
            s,
            r#"<text x="{lx}" y="{ty}" text-anchor="end" class="l">{label}</text><rect x="{x}" y="{ry}" width="{w:.1}" height="{h}" class="b"/><text x="{vx:.1}" y="{ty}" class="v">{value}</text>"#,
            lx = LABEL_WIDTH - 8,
            ty = y + 15,
            label = escape(&short(b.label)),
            x = LABEL_WIDTH,
            ry = y + 3,
            h = ROW - 6,
            vx = LABEL_WIDTH as f64 + w + 6.0,
            value = number(b.value),
        );
    }
    s.push_str("</svg>");
    s
}

/// Vertical columns in order (a timeline), the first, middle and last labels under them.
pub(crate) fn columns(id: &str, title: &str, desc: &str, bars: &[Bar]) -> String {
    let max = bars.iter().map(|b| b.value).max().unwrap_or(0).max(1);
    let (top, plot, bottom) = (18u32, 160u32, 24u32);
    let mut s = open(id, title, desc, WIDTH, top + plot + bottom);
    let n = bars.len().max(1) as f64;
    let step = (WIDTH - 20) as f64 / n;
    let _ = write!(s, r#"<text x="10" y="12" class="v">max {}</text>"#, number(max));
    for (i, b) in bars.iter().enumerate() {
        let h =
            (b.value as f64 / max as f64 * plot as f64).max(if b.value > 0 { 1.0 } else { 0.0 });
        let x = 10.0 + step * i as f64;
        let _ = write!(
            s,
            r#"<rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{h:.1}" class="b"><title>{label}: {value}</title></rect>"#,
            y = (top + plot) as f64 - h,
            w = (step * 0.8).max(0.5),
            label = escape(b.label),
            value = number(b.value),
        );
    }
    let shown = [0, bars.len() / 2, bars.len().saturating_sub(1)];
    for (k, &i) in shown.iter().enumerate() {
        let Some(b) = bars.get(i) else { continue };
        if k > 0 && i == shown[k - 1] {
            continue;
        }
        let anchor = ["start", "middle", "end"][k];
        let x = match k {
            0 => 10.0,
            1 => 10.0 + step * (i as f64 + 0.4),
            _ => (WIDTH - 10) as f64,
        };
        let _ = write!(
            s,
            r#"<text x="{x:.1}" y="{y}" text-anchor="{anchor}" class="l">{label}</text>"#,
            y = top + plot + 17,
            label = escape(b.label),
        );
    }
    s.push_str("</svg>");
    s
}

fn open(id: &str, title: &str, desc: &str, width: u32, height: u32) -> String {
    format!(
        r#"<svg class="chart" role="img" aria-labelledby="{id}-t {id}-d" viewBox="0 0 {width} {height}" preserveAspectRatio="xMinYMin meet"><title id="{id}-t">{title}</title><desc id="{id}-d">{desc}</desc>"#,
        title = escape(title),
        desc = escape(desc),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_escaped_and_bars_scaled() {
        let svg = bars(
            "c",
            "T<",
            "D",
            &[Bar { label: "<script>", value: 10 }, Bar { label: "b", value: 5 }],
        );
        assert!(svg.contains("&lt;script&gt;"));
        assert!(!svg.contains("<script>"));
        assert!(svg.contains("T&lt;"));
        assert!(svg.contains(r#"width="320.0""#), "{svg}");
        assert!(svg.contains(r#"width="160.0""#));
    }

    #[test]
    fn columns_of_one_period_label_it_once() {
        let svg = columns("t", "T", "D", &[Bar { label: "2024-01", value: 3 }]);
        assert_eq!(svg.matches(">2024-01<").count(), 1, "{svg}");
    }
}
