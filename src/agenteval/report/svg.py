"""Small inline SVG charts for the HTML report (no JavaScript, no network).

Every label is escaped here; the returned Markup is safe to embed as is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from agenteval.summary.model import HistogramBin

_W = 640
_FONT = 'font-family="system-ui,sans-serif" font-size="12"'


@dataclass(frozen=True, slots=True)
class Bar:
    """One horizontal bar: a value in [0, 1] with an optional interval."""

    label: str
    value: float | None
    low: float | None = None
    high: float | None = None
    note: str = ""


def histogram(bins: Sequence[HistogramBin], *, title: str, unit: str = "s") -> Markup:
    """A vertical-bar histogram of ``bins`` with the x range labelled in ``unit``."""
    if not bins or not any(b.count for b in bins):
        return Markup('<p class="muted">No data.</p>')
    h, pad_l, pad_b, pad_t = 180, 40, 28, 10
    top = max(b.count for b in bins)
    bw = (_W - pad_l - 10) / len(bins)
    parts = [
        f'<svg class="chart" viewBox="0 0 {_W} {h + pad_b + pad_t}" role="img"'
        f' aria-label="{escape(title)}" {_FONT}><title>{escape(title)}</title>'
    ]
    for i, b in enumerate(bins):
        bh = h * b.count / top
        x = pad_l + i * bw
        parts.append(
            f'<rect class="bar" x="{x + 1:.1f}" y="{pad_t + h - bh:.1f}" width="{bw - 2:.1f}"'
            f' height="{bh:.1f}"><title>{b.low:.2f}–{b.high:.2f}{unit}: {b.count}</title></rect>'
        )
    base = pad_t + h
    parts.append(f'<line x1="{pad_l}" y1="{base}" x2="{_W - 10}" y2="{base}" class="axis"/>')
    parts.append(f'<text x="{pad_l}" y="{base + 18}">{bins[0].low:.2f}{unit}</text>')
    parts.append(
        f'<text x="{_W - 10}" y="{base + 18}" text-anchor="end">{bins[-1].high:.2f}{unit}</text>'
    )
    parts.append(f'<text x="{pad_l - 6}" y="{pad_t + 10}" text-anchor="end">{top}</text>')
    parts.append(f'<text x="{pad_l - 6}" y="{base}" text-anchor="end">0</text>')
    parts.append("</svg>")
    return Markup("".join(parts))


def bars(items: Sequence[Bar], *, title: str, percent: bool = True) -> Markup:
    """Horizontal bars for values in [0, 1] (as percentages), with interval whiskers."""
    if not items:
        return Markup('<p class="muted">No data.</p>')
    row, label_w, pad = 24, 190, 8
    plot_w = _W - label_w - 120
    h = row * len(items) + 2 * pad
    parts = [
        f'<svg class="chart" viewBox="0 0 {_W} {h}" role="img" aria-label="{escape(title)}"'
        f" {_FONT}><title>{escape(title)}</title>"
    ]
    for i, it in enumerate(items):
        y = pad + i * row
        label = it.label if len(it.label) <= 28 else it.label[:27] + "…"
        parts.append(
            f'<text x="{label_w - 8}" y="{y + 16}" text-anchor="end">{escape(label)}'
            f"<title>{escape(it.label)}</title></text>"
        )
        parts.append(
            f'<rect class="track" x="{label_w}" y="{y + 4}" width="{plot_w}" height="{row - 8}"/>'
        )
        if it.value is None:
            parts.append(f'<text x="{label_w + 4}" y="{y + 16}" class="muted">n/a</text>')
            continue
        v = min(max(it.value, 0.0), 1.0)
        parts.append(
            f'<rect class="bar" x="{label_w}" y="{y + 4}" width="{plot_w * v:.1f}"'
            f' height="{row - 8}"/>'
        )
        if it.low is not None and it.high is not None:
            x1, x2 = label_w + plot_w * it.low, label_w + plot_w * it.high
            ym = y + row / 2
            parts.append(
                f'<path class="whisker" d="M{x1:.1f} {ym}H{x2:.1f}M{x1:.1f} {ym - 5}V{ym + 5}'
                f'M{x2:.1f} {ym - 5}V{ym + 5}"/>'
            )
        shown = f"{100 * v:.1f}%" if percent else f"{v:.3f}"
        parts.append(
            f'<text x="{label_w + plot_w + 6}" y="{y + 16}">{escape(shown)}'
            f"{escape(' ' + it.note) if it.note else ''}</text>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def split_bar(parts_in: Sequence[tuple[str, float]], *, title: str) -> Markup:
    """One stacked bar whose segments are the shares of a total (e.g. agent vs judge cost)."""
    total = sum(v for _, v in parts_in)
    if total <= 0:
        return Markup('<p class="muted">Nothing to show.</p>')
    parts = [
        f'<svg class="chart" viewBox="0 0 {_W} 56" role="img" aria-label="{escape(title)}"'
        f" {_FONT}><title>{escape(title)}</title>"
    ]
    x = 0.0
    for i, (label, v) in enumerate(parts_in):
        w = _W * v / total
        parts.append(
            f'<rect class="seg{i % 3}" x="{x:.1f}" y="4" width="{w:.1f}" height="24">'
            f"<title>{escape(label)}: {100 * v / total:.1f}%</title></rect>"
        )
        if w > 60:
            parts.append(
                f'<text x="{x + 4:.1f}" y="46">{escape(label)} {100 * v / total:.0f}%</text>'
            )
        x += w
    parts.append("</svg>")
    return Markup("".join(parts))
