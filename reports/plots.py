"""The figures of ``coflowlab compare``, each written as PNG (for the HTML report) and PDF.

=====================  ==============================================================
``ratio_boxplot``      distribution of ``objective / reference`` per algorithm
``cct_cdf``            CDF of coflow completion times per algorithm (pooled instances)
``varys_bins``         normalized CCT per Varys bin against a baseline algorithm
``ratio_vs_size``      ratio against instance size (when sizes vary)
``cct_over_arrival``   CCT of each coflow over its arrival time, online runs
=====================  ==============================================================

The normalized CCT follows the Varys evaluation (Chowdhury, Zhong & Stoica, "Efficient Coflow
Scheduling with Varys", SIGCOMM 2014, §7): compared duration / baseline duration, here the
ratio of the *average* CCTs over the same coflows, so a value above 1 means the baseline is
faster. Bins are short/long (longest flow under 5 MB) × narrow/wide (at most 50 flows).

A figure without data (no online runs, one instance size, no per-coflow times) is skipped and
its reason returned. matplotlib is imported only here, inside :func:`figures`, and only through
its object-oriented API with the Agg renderer (no pyplot, no global state). PDFs carry no
creation date and PNGs no software tag, so the same records give the same bytes.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .records import BIN_NAMES, FAMILIES, RatedRecord, instance_key

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "FIGURE_NAMES",
    "BinComparison",
    "FigureFile",
    "FigureSet",
    "default_baseline",
    "figures",
    "normalized_cct_by_bin",
]

FIGURE_NAMES = ("ratio_boxplot", "cct_cdf", "varys_bins", "ratio_vs_size", "cct_over_arrival")
"""The figures, in report order (file names without extension)."""

_RC: dict[str, Any] = {
    "svg.hashsalt": "coflowlab",  # fixed ids in SVG output
    "pdf.fonttype": 42,  # TrueType in PDFs: text stays editable in papers
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
}
_PNG_DPI = 150
_LINESTYLES = ("-", "--", "-.", ":")


@dataclass(frozen=True)
class FigureFile:
    """One written figure.

    Attributes
    ----------
    name
        One of :data:`FIGURE_NAMES`.
    caption
        What the figure shows, one or two sentences for the report.
    png, pdf
        The written files.
    """

    name: str
    caption: str
    png: Path
    pdf: Path


@dataclass(frozen=True)
class FigureSet:
    """The figures :func:`figures` wrote, and why the others were skipped."""

    written: list[FigureFile] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)

    @property
    def paths(self) -> list[Path]:
        """Every written file, PNG then PDF of each figure."""
        return [p for f in self.written for p in (f.png, f.pdf)]


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    """Writes ``data`` through a temporary file in the same folder (no half-written file)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _save(fig: Figure, outdir: Path, name: str, caption: str) -> FigureFile:
    """Writes ``fig`` as ``name.png`` and ``name.pdf`` without dates or version tags."""
    files = {}
    for ext, kwargs in (
        ("png", {"dpi": _PNG_DPI, "metadata": {"Software": None}}),
        ("pdf", {"metadata": {"CreationDate": None, "Creator": None, "Producer": None}}),
    ):
        buf = io.BytesIO()
        fig.savefig(buf, format=ext, **kwargs)
        files[ext] = outdir / f"{name}.{ext}"
        _atomic_write_bytes(files[ext], buf.getvalue())
    return FigureFile(name, caption, files["png"], files["pdf"])


def _unit_label(unit: str) -> str:
    return "time units" if unit == "unit" else unit


_Palette = dict[str, dict[str, Any]]
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "h")


def _styles(names: Sequence[str]) -> _Palette:
    """A colour, marker and line style per algorithm (by sorted name), shared by every
    figure of a report so that an algorithm looks the same everywhere."""
    from matplotlib import colormaps

    ordered = sorted(set(names))
    cmap = colormaps["tab10" if len(ordered) <= 10 else "tab20"]
    return {
        n: {
            "color": cmap(i % cmap.N),
            "marker": _MARKERS[i % len(_MARKERS)],
            "linestyle": _LINESTYLES[i % len(_LINESTYLES)],
        }
        for i, n in enumerate(ordered)
    }


def _wants_log(values: np.ndarray, spread: float) -> bool:
    """Log scale when every value is positive and they span more than ``spread``×."""
    return bool(values.size and values.min() > 0 and values.max() / values.min() > spread)


def default_baseline(rated: Sequence[RatedRecord]) -> str | None:
    """The baseline of the bin figure when none is given: ``varys`` if it ran with
    per-coflow times, else the first such algorithm whose name starts with ``varys``, else
    the first online one, else the first one (by name); ``None`` if no run has times.

    Examples
    --------
    >>> from coflowlab.reports import TaskRecord, attach_reference
    >>> recs = [TaskRecord("a", None, n, "online", "exact", "feasible", 1.0, 1.0, 0.1,
    ...                    release=[0.0], completion=[1.0]) for n in ("fair", "varys:x=1")]
    >>> default_baseline(attach_reference(recs, "opt"))
    'varys:x=1'
    """
    with_times = sorted({r.record.algorithm for r in rated if r.record.has_schedule})
    online = sorted(
        {
            r.record.algorithm
            for r in rated
            if r.record.has_schedule and r.record.family == "online"
        }
    )
    for choice in (
        [n for n in with_times if n == "varys"],
        [n for n in with_times if n.startswith("varys")],
        online,
        with_times,
    ):
        if choice:
            return choice[0]
    return None


def _reference_label(rated: Sequence[RatedRecord]) -> str:
    kinds = sorted({r.reference_kind for r in rated if r.reference_kind})
    reference = rated[0].reference
    if reference == "opt":
        return "optimum" if kinds == ["opt"] else "optimum or exact bound"
    if reference == "bound":
        return "best lower bound"
    return reference


def _ratio_boxplot(rated: Sequence[RatedRecord], outdir: Path) -> FigureFile | str:
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    by_alg: dict[str, list[float]] = {}
    family: dict[str, str] = {}
    for r in rated:
        if r.ratio is not None:
            by_alg.setdefault(r.record.algorithm, []).append(r.ratio)
            family[r.record.algorithm] = r.record.family
    if not by_alg:
        return "no task has a ratio to the reference"
    # Top to bottom by family, then name (matplotlib draws the first box at the bottom).
    names = sorted(by_alg, key=lambda n: (FAMILIES.index(family[n]), n), reverse=True)
    fam_colors = {f: st["color"] for f, st in _styles(FAMILIES).items()}
    fig = Figure(figsize=(7.0, 1.2 + 0.38 * len(names)), layout="constrained")
    ax = fig.add_subplot()
    data = [by_alg[n] for n in names]
    box = ax.boxplot(
        data,
        orientation="horizontal",
        tick_labels=names,
        patch_artist=True,
        widths=0.6,
        showfliers=False,  # every instance is drawn as a dot already
    )
    for patch, n in zip(box["boxes"], names, strict=True):
        patch.set_facecolor(fam_colors[family[n]])
        patch.set_alpha(0.45)
    for median in box["medians"]:
        median.set_color("black")
    rng = np.random.default_rng(0)  # jitter only, seeded so the figure is reproducible
    for i, values in enumerate(data, start=1):
        ax.scatter(values, i + rng.uniform(-0.12, 0.12, len(values)), s=9, color="0.2", zorder=3)
    ax.axvline(1.0, color="0.3", linestyle="--", linewidth=1)
    ax.set_xlabel(f"ratio = objective / {_reference_label(rated)}  (1 = reference)")
    ax.set_title("Ratio to the reference, per algorithm (one dot per instance)")
    present = [f for f in FAMILIES if f in family.values()]
    ax.legend(
        handles=[Patch(facecolor=fam_colors[f], alpha=0.45, label=f) for f in present],
        title="family",
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        borderaxespad=0,
    )
    caption = (
        "Distribution of objective / reference per algorithm over the instances (box: "
        "quartiles and median, whiskers: 1.5 IQR, dots: instances). Relaxations and bounds "
        "lie at or below 1 against a proven optimum."
    )
    return _save(fig, outdir, "ratio_boxplot", caption)


def _time_unit(rated: Sequence[RatedRecord]) -> str | None:
    """The one time unit of the runs with per-coflow times, ``None`` if they mix units."""
    units = {r.record.time_unit for r in rated if r.record.has_schedule}
    return units.pop() if len(units) == 1 else None


def _cct_cdf(rated: Sequence[RatedRecord], outdir: Path, styles: _Palette) -> FigureFile | str:
    from matplotlib.figure import Figure

    pooled: dict[str, list[np.ndarray]] = {}
    for r in rated:
        if r.record.cct is not None:
            pooled.setdefault(r.record.algorithm, []).append(r.record.cct)
    if not pooled:
        return "no run reported per-coflow completion times"
    unit = _time_unit(rated)
    if unit is None:
        return "the runs mix time units, so their CCTs cannot share an axis"
    fig = Figure(figsize=(7.0, 4.2), layout="constrained")
    ax = fig.add_subplot()
    all_values = np.concatenate([np.concatenate(v) for v in pooled.values()])
    for name in sorted(pooled):
        values = np.sort(np.concatenate(pooled[name]))
        frac = np.arange(1, values.size + 1) / values.size
        ax.step(
            values,
            frac,
            where="post",
            color=styles[name]["color"],
            linestyle=styles[name]["linestyle"],
            linewidth=1.6,
            label=f"{name} (n={values.size})",
        )
    if _wants_log(all_values, 100.0):
        ax.set_xscale("log")
    ax.set_xlabel(f"coflow completion time, C − r ({_unit_label(unit)})")
    ax.set_ylabel("fraction of coflows")
    ax.set_ylim(0, 1.02)
    ax.set_title("CCT distribution per algorithm (all instances pooled)")
    # Beside the axes: inside, it would hide the curve of a slow algorithm.
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    caption = (
        "Empirical CDF of coflow completion times (completion minus release), pooled over "
        "all instances each algorithm ran on; n is the number of coflows."
    )
    return _save(fig, outdir, "cct_cdf", caption)


@dataclass(frozen=True)
class BinComparison:
    """Average CCT per Varys bin of each algorithm, normalized by a baseline's.

    Attributes
    ----------
    baseline
        The algorithm every value is divided by.
    coflows
        Per group (``"SN"``, ``"LN"``, ``"SW"``, ``"LW"``, ``"all"``), the number of coflows
        of the baseline's instances in it.
    normalized
        ``normalized[algorithm][group]``: Σ CCT of the algorithm / Σ CCT of the baseline over
        the same coflows (the ratio of the averages); groups without coflows are left out.
    """

    baseline: str
    coflows: dict[str, int]
    normalized: dict[str, dict[str, float]]


def normalized_cct_by_bin(rated: Sequence[RatedRecord], baseline: str) -> BinComparison:
    """The Varys evaluation's normalized CCT per bin: compared duration / baseline duration
    (Chowdhury, Zhong & Stoica, "Efficient Coflow Scheduling with Varys", SIGCOMM 2014,
    §7), taken as the ratio of the average CCTs over the coflows both finished.

    An algorithm counts on an instance when it and the baseline both have per-coflow times
    there; bins are the baseline's.

    Raises
    ------
    ValueError
        The baseline has no per-coflow times with bins, or no other algorithm has per-coflow
        times on its instances (the message says which).

    Examples
    --------
    >>> from coflowlab.reports import TaskRecord, attach_reference
    >>> def run(name, cct):
    ...     return TaskRecord("a", None, name, "online", "exact", "feasible", float(sum(cct)),
    ...                       None, 0.1, release=[0.0, 0.0], completion=cct, bin=("SN", "LW"))
    >>> cmp = normalized_cct_by_bin(attach_reference([run("fair", [2.0, 2.0]),
    ...                                               run("varys", [1.0, 2.0])], "opt"), "varys")
    >>> cmp.normalized["fair"]
    {'SN': 2.0, 'LW': 1.0, 'all': 1.3333333333333333}
    """
    base = {
        r.record.key: r.record
        for r in rated
        if r.record.algorithm == baseline and r.record.cct is not None and r.record.bin is not None
    }
    if not base:
        raise ValueError(f"the baseline {baseline!r} has no per-coflow times with Varys bins")
    groups = [*BIN_NAMES, "all"]
    masks = {key: _group_masks(b.bin, groups) for key, b in base.items()}  # type: ignore[arg-type]
    coflows = {g: sum(int(m[g].sum()) for m in masks.values()) for g in groups}
    sums: dict[str, dict[str, list[float]]] = {}  # algorithm -> group -> [its Σ, baseline's Σ]
    for r in rated:
        rec, b = r.record, base.get(r.record.key)
        if rec.algorithm == baseline or b is None or rec.cct is None or b.cct is None:
            continue
        if rec.cct.size != b.cct.size:
            continue  # not the same coflows: cannot be compared coflow by coflow
        acc = sums.setdefault(rec.algorithm, {g: [0.0, 0.0] for g in groups})
        for g, mask in masks[rec.key].items():
            acc[g][0] += float(rec.cct[mask].sum())
            acc[g][1] += float(b.cct[mask].sum())
    if not sums:
        raise ValueError(
            f"no other algorithm has per-coflow times on the instances {baseline!r} ran on"
        )
    normalized = {
        name: {g: a / bsum for g, (a, bsum) in acc.items() if coflows[g] and bsum > 0}
        for name, acc in sorted(sums.items())
    }
    return BinComparison(baseline, coflows, normalized)


def _group_masks(bins: tuple[str, ...], groups: Sequence[str]) -> dict[str, np.ndarray]:
    arr = np.asarray(bins)
    return {g: np.ones(arr.size, bool) if g == "all" else arr == g for g in groups}


def _varys_bins(
    rated: Sequence[RatedRecord], outdir: Path, styles: _Palette, baseline: str | None
) -> FigureFile | str:
    from matplotlib.figure import Figure

    if baseline is None:
        return "no run reported per-coflow completion times"
    try:
        cmp = normalized_cct_by_bin(rated, baseline)
    except ValueError as exc:
        return str(exc)
    groups = [g for g, n in cmp.coflows.items() if n > 0]
    names = list(cmp.normalized)
    legend_rows = -(-(len(names) + 1) // 3)  # ceil: the legend below grows with the names
    fig = Figure(figsize=(7.5, 3.8 + 0.25 * legend_rows), layout="constrained")
    ax = fig.add_subplot()
    width = 0.8 / len(names)
    x = np.arange(len(groups))
    for k, name in enumerate(names):
        values = [cmp.normalized[name].get(g, np.nan) for g in groups]
        ax.bar(x - 0.4 + (k + 0.5) * width, values, width, color=styles[name]["color"], label=name)
    ax.axhline(1.0, color="0.3", linestyle="--", linewidth=1, label=f"{baseline} (= 1)")
    ax.set_xticks(x, [f"{g}\n(n = {cmp.coflows[g]})" for g in groups])
    all_values = np.array([v for per in cmp.normalized.values() for v in per.values()])
    if _wants_log(all_values, 20.0):
        ax.set_yscale("log")
    ax.set_ylabel(f"normalized CCT = avg CCT / avg CCT of {baseline}")
    # instances without units are binned at 5 size units (their sizes read as MB)
    short = "5 size units" if _time_unit(rated) in (None, "unit") else "5 MB"
    ax.set_xlabel(f"Varys bin (S/L: longest flow < / ≥ {short}; N/W: ≤ / > 50 flows)")
    ax.set_title(f"Average CCT per Varys bin, normalized by {baseline}")
    # Below the axes: long algorithm names beside it would squeeze the bin labels together.
    fig.legend(loc="outside lower center", ncol=min(3, len(names) + 1))
    caption = (
        f"Average CCT of each algorithm divided by the average CCT of {baseline} on the same "
        "coflows, per Varys bin (Chowdhury, Zhong & Stoica, SIGCOMM 2014, §7); above 1 "
        f"means {baseline} is faster."
    )
    return _save(fig, outdir, "varys_bins", caption)


def _ratio_vs_size(
    rated: Sequence[RatedRecord], outdir: Path, styles: _Palette
) -> FigureFile | str:
    from matplotlib.figure import Figure

    points = [r for r in rated if r.ratio is not None]
    if not points:
        return "no task has a ratio to the reference"
    if len({r.record.num_coflows for r in points}) > 1:
        size_name, size_of = "number of coflows", (lambda r: r.record.num_coflows)
    elif len({r.record.num_flows for r in points}) > 1:
        size_name, size_of = "number of flows", (lambda r: r.record.num_flows)
    else:
        return "every instance has the same size"
    by_alg: dict[str, list[tuple[int, float]]] = {}
    for r in points:
        by_alg.setdefault(r.record.algorithm, []).append((size_of(r), r.ratio))  # type: ignore[arg-type]
    fig = Figure(figsize=(7.5, 4.2), layout="constrained")
    ax = fig.add_subplot()
    for name in sorted(by_alg):
        st = styles[name]
        xy = np.array(sorted(by_alg[name]), dtype=float)
        ax.scatter(xy[:, 0], xy[:, 1], s=14, color=st["color"], alpha=0.5, marker=st["marker"])
        sizes = np.unique(xy[:, 0])
        means = [xy[xy[:, 0] == s, 1].mean() for s in sizes]
        ax.plot(
            sizes, means, color=st["color"], marker=st["marker"], markersize=5,
            linestyle=st["linestyle"], label=name,
        )  # fmt: skip
    ax.axhline(1.0, color="0.3", linestyle="--", linewidth=1)
    ax.set_xlabel(f"instance size ({size_name})")
    ax.set_ylabel(f"ratio = objective / {_reference_label(rated)}")
    ax.set_title("Ratio to the reference against instance size (line: mean per size)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    caption = (
        f"Ratio of each task against the instance's {size_name}; faint markers are single "
        "instances, lines join the mean ratio per size."
    )
    return _save(fig, outdir, "ratio_vs_size", caption)


def _cct_over_arrival(
    rated: Sequence[RatedRecord], outdir: Path, styles: _Palette
) -> FigureFile | str:
    from matplotlib.figure import Figure

    # (record, release, CCT) of every online run with per-coflow times.
    online = [
        (r.record, r.record.release, r.record.cct)
        for r in rated
        if r.record.family == "online"
        and r.record.release is not None
        and r.record.cct is not None
    ]
    if not online:
        return "no online run reported per-coflow times"
    # One instance, so that arrival times share a clock: the largest, first by name on ties.
    sizes: dict[tuple[str, int | None], int] = {}
    for rec, _, cct in online:
        sizes[rec.key] = max(sizes.get(rec.key, 0), cct.size)
    key = min(sizes, key=lambda k: (-sizes[k], k[0], k[1] is not None, k[1] or 0))
    runs = sorted((run for run in online if run[0].key == key), key=lambda run: run[0].algorithm)
    unit = _unit_label(runs[0][0].time_unit)
    fig = Figure(figsize=(7.5, 4.2), layout="constrained")
    ax = fig.add_subplot()
    all_cct = np.concatenate([cct for _, _, cct in runs])
    for rec, release, cct in runs:
        st = styles[rec.algorithm]
        ax.scatter(
            release, cct, s=16, color=st["color"], alpha=0.7,
            marker=st["marker"], label=rec.algorithm,
        )  # fmt: skip
    if _wants_log(all_cct, 100.0):
        ax.set_yscale("log")
    # a generated instance's name already ends with its seed
    label = (
        key[0]
        if key[1] is None or key[0].endswith(f"seed={key[1]}")
        else f"{key[0]} (seed {key[1]})"
    )
    ax.set_xlabel(f"arrival (release) time ({unit})")
    ax.set_ylabel(f"CCT, C − r ({unit})")
    # the instance's name on a line of its own: generated names are long
    ax.set_title(f"CCT over arrival time, online runs\non {label}", fontsize="medium")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    caption = (
        f"Completion time of each coflow against its arrival, for the online runs on {label} "
        "(the instance with the most coflows among those with online runs)."
    )
    return _save(fig, outdir, "cct_over_arrival", caption)


def figures(
    rated: Sequence[RatedRecord], outdir: str | Path, baseline: str | None = None
) -> FigureSet:
    """Draws every figure that has data into ``outdir`` (created if needed), PNG and PDF.

    Parameters
    ----------
    rated
        Output of :func:`coflowlab.reports.attach_reference`.
    outdir
        Folder for ``NAME.png`` and ``NAME.pdf`` (names in :data:`FIGURE_NAMES`).
    baseline
        Algorithm (full spelling) the Varys-bin figure normalizes by; default
        :func:`default_baseline`.

    Returns
    -------
    FigureSet
        The written figures with captions, and a reason for each skipped one.

    Examples
    --------
    >>> import tempfile
    >>> from coflowlab.reports import TaskRecord, attach_reference
    >>> recs = [TaskRecord("a", None, "fifo", "online", "exact", "feasible", 3.0, 1.5, 0.1,
    ...                    release=[0.0, 0.0], completion=[1.0, 2.0], bin=("SN", "SN"))]
    >>> with tempfile.TemporaryDirectory() as d:
    ...     out = figures(attach_reference(recs, "fifo"), d)
    >>> [f.name for f in out.written]
    ['ratio_boxplot', 'cct_cdf', 'cct_over_arrival']
    >>> out.skipped["ratio_vs_size"]
    'every instance has the same size'
    """
    import matplotlib

    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    rated = sorted(rated, key=lambda r: (instance_key(r.record), r.record.algorithm))
    if baseline is None:
        baseline = default_baseline(rated)
    elif not any(r.record.algorithm == baseline for r in rated):
        names = ", ".join(sorted({r.record.algorithm for r in rated}))
        raise ValueError(f"baseline {baseline!r} is not an algorithm that ran; they are: {names}")
    result = FigureSet()
    styles = _styles([r.record.algorithm for r in rated])
    makers = {
        "ratio_boxplot": lambda: _ratio_boxplot(rated, outdir),
        "cct_cdf": lambda: _cct_cdf(rated, outdir, styles),
        "varys_bins": lambda: _varys_bins(rated, outdir, styles, baseline),
        "ratio_vs_size": lambda: _ratio_vs_size(rated, outdir, styles),
        "cct_over_arrival": lambda: _cct_over_arrival(rated, outdir, styles),
    }
    with matplotlib.rc_context(_RC):  # type: ignore[arg-type]  # keys typed as Literal
        for name in FIGURE_NAMES:
            out = makers[name]() if rated else "no tasks"
            if isinstance(out, str):
                result.skipped[name] = out
                # A figure from an earlier run into the same folder would now be stale.
                for ext in ("png", "pdf"):
                    (outdir / f"{name}.{ext}").unlink(missing_ok=True)
            else:
                result.written.append(out)
    return result
