"""Tiny server-rendered SVG bar charts (no JS, no inline styles: classes from exograph.css)."""

from __future__ import annotations

from typing import TypedDict

WIDTH, HEIGHT, LEFT, BOTTOM, TOP = 600, 160, 36, 18, 8


class Bar(TypedDict):
    x: float
    y: float
    width: float
    height: float
    value: int
    label: str
    tick: bool


class Chart(TypedDict):
    width: int
    height: int
    bars: list[Bar]
    maximum: int
    axis_y: int
    left: int
    right: int
    limit_y: float | None
    total: int


def bar_chart(values: list[int], labels: list[str], *, limit: int | None = None) -> Chart:
    """Geometry for one bar per value; a dashed line marks `limit` when it fits on the scale."""
    maximum = max([*values, 1])
    scale_max = max(maximum, limit or 0) if limit and limit <= maximum * 4 else maximum
    plot_h = HEIGHT - BOTTOM - TOP
    step = (WIDTH - LEFT) / max(len(values), 1)
    bars: list[Bar] = []
    for i, (value, label) in enumerate(zip(values, labels, strict=True)):
        height = plot_h * value / scale_max if value else 1.5
        bars.append(
            Bar(
                x=round(LEFT + i * step + step * 0.15, 1),
                y=round(HEIGHT - BOTTOM - height, 1),
                width=round(step * 0.7, 1),
                height=round(height, 1),
                value=value,
                label=label,
                tick=i % 5 == 0 or i == len(values) - 1,
            )
        )
    limit_y = round(HEIGHT - BOTTOM - plot_h * limit / scale_max, 1) if limit and limit <= scale_max else None
    return Chart(
        width=WIDTH,
        height=HEIGHT,
        bars=bars,
        maximum=scale_max,
        axis_y=HEIGHT - BOTTOM,
        left=LEFT,
        right=WIDTH,
        limit_y=limit_y,
        total=sum(values),
    )
