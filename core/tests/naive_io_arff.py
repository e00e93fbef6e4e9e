"""A slow, obvious pure-Python ARFF reader: the reference the numba loader is tested
against. Same policies as mlw.io.arff (binary nominal -> one column, the value reading
as true is 1; 3+ values -> one-hot; '?' -> NaN; labels in the given order), none of its
code. Handles what the shared datasets use: unquoted data values, dense and sparse rows.
"""

from __future__ import annotations

import math
import re

TRUE = {"1", "yes", "true", "y", "t", "+1", "1.0", "on", "pos", "positive"}
FALSE = {"0", "no", "false", "n", "f", "-1", "0.0", "off", "neg", "negative"}


def _unquote(tok):
    if len(tok) >= 2 and tok[0] in "'\"" and tok[-1] == tok[0]:
        body, out, i = tok[1:-1], "", 0
        while i < len(body):
            if body[i] == "\\" and i + 1 < len(body) and body[i + 1] in "\\'\"%":
                out += body[i + 1]
                i += 2
            else:
                out += body[i]
                i += 1
        return out
    return tok


def read(text, label_names=None, n_labels=None):
    """-> (X rows as lists, Y rows as lists, feature_names, label_names)."""
    attrs = []  # (name, values or None)
    lines = text.splitlines()
    i = 0
    while True:
        ln = lines[i].strip()
        i += 1
        if ln.lower().startswith("@attribute"):
            m = re.match(r"@attribute\s+('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\S+)\s+(.*)$",
                         ln, re.IGNORECASE)
            name, typ = _unquote(m.group(1)), m.group(2).strip()
            if typ.startswith("{"):
                vals = [_unquote(v.strip()) for v in typ.strip("{}").split(",")]
                attrs.append((name, vals))
            else:
                attrs.append((name, None))
        elif ln.lower().startswith("@data"):
            break
    names = [a[0] for a in attrs]
    if label_names is None:
        label_names = names[:n_labels] if n_labels > 0 else names[n_labels:]
    label_idx = [names.index(n) for n in label_names]
    rows = []
    for ln in lines[i:]:
        ln = ln.strip()
        if not ln or ln.startswith("%"):
            continue
        if ln.startswith("{"):
            row = [a[1][0] if a[1] else "0" for a in attrs]
            for entry in ln.strip("{}").split(","):
                if not entry.strip():
                    continue
                k, v = entry.split(None, 1)
                row[int(k)] = v.strip()
        else:
            row = [v.strip() for v in ln.split(",")]
            assert len(row) == len(attrs)
        rows.append(row)

    def one_of(vals):
        a, b = vals[0].lower(), vals[1].lower()
        return 0 if (a in TRUE and b in FALSE) else 1

    X, Y, fnames = [[] for _ in rows], [[] for _ in rows], []
    for j, (name, vals) in enumerate(attrs):
        if j in label_idx:
            continue
        if vals is None:
            fnames.append(name)
            for r, row in enumerate(rows):
                X[r].append(math.nan if row[j] == "?" else float(row[j]))
        elif len(vals) <= 2:
            fnames.append(name)
            one = vals[one_of(vals)] if len(vals) == 2 else None
            for r, row in enumerate(rows):
                X[r].append(math.nan if row[j] == "?" else float(row[j] == one))
        else:
            fnames.extend(f"{name}={v}" for v in vals)
            for r, row in enumerate(rows):
                X[r].extend([math.nan] * len(vals) if row[j] == "?" else
                            [float(row[j] == v) for v in vals])
    for j in label_idx:
        name, vals = attrs[j]
        for r, row in enumerate(rows):
            if vals is None:
                Y[r].append(int(float(row[j])))
            else:
                Y[r].append(int(row[j] == vals[one_of(vals)]))
    return X, Y, fnames, label_names
