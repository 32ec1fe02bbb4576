//! A finished table, laid out in a box to the terminal's width: each
//! column as wide as its widest cell, the widest columns narrowed (their
//! cells wrapped) until the table fits, and each cell aligned as the
//! delimiter row says.

use super::blocks::Align;
use super::paint::{Look, Span, width, wrap};

/// A table's cells, inline-rendered.
#[derive(Debug, Default)]
pub struct Table {
    /// Each column's alignment.
    pub aligns: Vec<Align>,
    /// The header's cells.
    pub header: Vec<Vec<Span>>,
    /// The body's rows; each has as many cells as the header.
    pub rows: Vec<Vec<Vec<Span>>>,
}

/// What a header cell adds to its look.
const HEADER: Look = Look {
    bold: true,
    dim: false,
    italic: false,
    underline: false,
    strike: false,
    fg: None,
};

impl Table {
    /// `cells` as a row of the table: cut or filled to the header's
    /// number of cells.
    pub fn push(&mut self, mut cells: Vec<Vec<Span>>) {
        cells.resize(self.aligns.len(), Vec::new());
        self.rows.push(cells);
    }

    /// The table's rows on screen, at most `room` columns wide. A table
    /// whose columns cannot each have a column of text in `room` shows
    /// one line per row instead, its cells between `│`.
    #[must_use]
    pub fn lines(&self, room: usize) -> Vec<Vec<Span>> {
        let columns = self.aligns.len();
        let borders = 3 * columns + 1;
        let Some(available) = room.checked_sub(borders).filter(|&a| a >= columns) else {
            return self.plain_lines(room);
        };
        let natural: Vec<usize> = (0..columns)
            .map(|i| {
                std::iter::once(&self.header)
                    .chain(&self.rows)
                    .map(|row| width(&row[i]))
                    .max()
                    .unwrap_or(0)
                    .max(1)
            })
            .collect();
        let widths = fit(&natural, available);
        let rule = |left: &str, middle: &str, right: &str| {
            let bars: Vec<String> = widths.iter().map(|w| "─".repeat(w + 2)).collect();
            vec![Span::new(
                format!("{left}{}{right}", bars.join(middle)),
                Look::DIM,
            )]
        };
        let mut out = vec![rule("┌", "┬", "┐")];
        self.row_lines(&self.header, &widths, HEADER, &mut out);
        out.push(rule("├", "┼", "┤"));
        for row in &self.rows {
            self.row_lines(row, &widths, Look::default(), &mut out);
        }
        out.push(rule("└", "┴", "┘"));
        out
    }

    /// One row's lines: its cells wrapped to their columns, side by side.
    fn row_lines(&self, row: &[Vec<Span>], widths: &[usize], look: Look, out: &mut Vec<Vec<Span>>) {
        let wrapped: Vec<Vec<Vec<Span>>> = row
            .iter()
            .zip(widths)
            .map(|(cell, &w)| {
                let styled: Vec<Span> = cell
                    .iter()
                    .map(|s| Span {
                        look: s.look.with(look),
                        ..s.clone()
                    })
                    .collect();
                wrap(&styled, w)
            })
            .collect();
        let height = wrapped.iter().map(Vec::len).max().unwrap_or(1);
        for line in 0..height {
            let mut spans = vec![Span::new("│", Look::DIM)];
            for ((cell, &w), align) in wrapped.iter().zip(widths).zip(&self.aligns) {
                let text = cell.get(line).cloned().unwrap_or_default();
                let gap = w.saturating_sub(width(&text));
                let (before, after) = match align {
                    Align::Left => (0, gap),
                    Align::Right => (gap, 0),
                    Align::Center => (gap / 2, gap - gap / 2),
                };
                spans.push(Span::plain(" ".repeat(before + 1)));
                spans.extend(text);
                spans.push(Span::plain(" ".repeat(after + 1)));
                spans.push(Span::new("│", Look::DIM));
            }
            out.push(spans);
        }
    }

    /// Too narrow for a box: each row on its own lines, cells between `│`.
    fn plain_lines(&self, room: usize) -> Vec<Vec<Span>> {
        let mut out = Vec::new();
        for (i, row) in std::iter::once(&self.header).chain(&self.rows).enumerate() {
            let look = if i == 0 { HEADER } else { Look::default() };
            let mut spans = Vec::new();
            for (j, cell) in row.iter().enumerate() {
                if j > 0 {
                    spans.push(Span::new(" │ ", Look::DIM));
                }
                spans.extend(cell.iter().map(|s| Span {
                    look: s.look.with(look),
                    ..s.clone()
                }));
            }
            out.extend(wrap(&spans, room));
        }
        out
    }
}

/// Column widths that add up to at most `available`: every column as wide
/// as its `natural` width if they fit; otherwise the widest are narrowed to
/// one width, the largest that fits, and what is left goes to them one
/// column at a time, left to right.
#[must_use]
pub fn fit(natural: &[usize], available: usize) -> Vec<usize> {
    if natural.iter().sum::<usize>() <= available {
        return natural.to_vec();
    }
    let capped = |level: usize| natural.iter().map(|&n| n.min(level)).sum::<usize>();
    let (mut low, mut high) = (1, natural.iter().copied().max().unwrap_or(1));
    while low < high {
        let mid = (low + high).div_ceil(2);
        if capped(mid) <= available {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    let mut widths: Vec<usize> = natural.iter().map(|&n| n.min(low)).collect();
    let mut left = available.saturating_sub(widths.iter().sum());
    for (w, &n) in widths.iter_mut().zip(natural) {
        if left == 0 {
            break;
        }
        if n > *w {
            *w += 1;
            left -= 1;
        }
    }
    widths
}
