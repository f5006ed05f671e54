#!/usr/bin/env python3
"""Plot a QUIC sender's congestion window from a quicsim series CSV.

Usage: scripts/plot_cwnd.py SERIES.csv OUT.png [--endpoint flow0.ep1] [--title TEXT]
       [--unit BYTES]

`--endpoint` is the column prefix of the sending endpoint (in a `quic_bulk` flow, ep0 is
the client and ep1 the server, which sends the response). The window is plotted in
segments of `--unit` bytes (default 1250, the default max_udp_payload). W_max of each
congestion epoch is rebuilt from the window at each reduction with RFC 9438 §4.7: the
window itself, or (with fast convergence, `--fc-factor`, 0.85 = (1 + beta)/2 for
beta = 0.7; 0 = off) that factor times it when it is below the previous W_max. Below
W_max the curve is drawn as concave, above it as convex. The window at a reduction is
read from the samples, so use a short `sample_interval`.

Needs matplotlib (`pip install matplotlib`).
"""
import argparse
import csv

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("out")
    ap.add_argument("--endpoint", default="flow0.ep1")
    ap.add_argument("--title", default="")
    ap.add_argument("--unit", type=float, default=1250.0)
    ap.add_argument("--fc-factor", type=float, default=0.85)
    a = ap.parse_args()
    t, w, ss = [], [], []
    with open(a.csv) as f:
        for row in csv.DictReader(f):
            t.append(float(row["time_s"]))
            w.append(float(row[a.endpoint + ".cwnd"]) / a.unit)
            s = float(row[a.endpoint + ".ssthresh"])
            ss.append(s / a.unit if s != float("inf") else float("nan"))
    # Reductions: samples where the window fell.
    peaks = []  # (index of the last sample before a reduction, W_max after it)
    wmax = 0.0
    for i in range(1, len(w)):
        if w[i] < w[i - 1] * 0.95:
            at_loss = w[i - 1]
            if a.fc_factor > 0 and at_loss < wmax:
                wmax = at_loss * a.fc_factor
            else:
                wmax = at_loss
            peaks.append((i - 1, wmax))
    fig, ax = plt.subplots(figsize=(10, 4.5))
    ax.plot(t, w, color="0.6", lw=0.8, label="cwnd")
    # Colour each epoch after the first reduction: concave below the previous peak,
    # convex above it.
    for k, (i0, peak) in enumerate(peaks):
        i1 = peaks[k + 1][0] if k + 1 < len(peaks) else len(w) - 1
        xs, ys = t[i0 + 1 : i1 + 1], w[i0 + 1 : i1 + 1]
        cav = [y if y <= peak else float("nan") for y in ys]
        vex = [y if y >= peak else float("nan") for y in ys]
        ax.plot(xs, cav, color="tab:blue", lw=1.6, label="concave (below W_max)" if k == 0 else None)
        ax.plot(xs, vex, color="tab:red", lw=1.6, label="convex (above W_max)" if k == 0 else None)
        ax.hlines(peak, t[i0], t[i1], colors="k", linestyles=":", lw=0.8,
                  label="W_max (RFC 9438 §4.7)" if k == 0 else None)
    ax.plot(t, ss, color="tab:green", lw=0.8, ls="--", label="ssthresh")
    ax.set_xlabel("time (s)")
    ax.set_ylabel(f"window ({a.unit:.0f}-byte segments)")
    ax.set_ylim(bottom=0)
    if a.title:
        ax.set_title(a.title)
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)


if __name__ == "__main__":
    main()
