"""Mapping attribute-level CSR (what :func:`mlw.io._kernels.parse_arff_rows` produces) to
the feature matrix ``X`` and the label matrix ``Y``, with numpy.

Each attribute has a role (copy, inverted binary, one-hot, label, dropped) decided in
Python by :mod:`mlw.io.arff`. :func:`plan_expansion` checks the labels and counts each
row's entries of ``X`` and ``Y`` (so the caller can check the memory first), and
:meth:`Expansion.fill` writes them, so nothing is densified.

A row's entries come in this order: its stored entries in file order, each giving
none, one or (a missing one-hot value: NaN in each of its columns) several; then the
"complex" attributes absent from the row, in attribute order, each giving one (an
inverted binary, or a one-hot attribute at its first value, in ``X``; a nominal label
whose first value is 1, in ``Y``). The stored entries' first items are picked with a
mask, which keeps their order; the other items are put in place by one ``np.insert``.
Numeric features and binary labels, most files, need the mask alone. Nothing for
numba to compile on a fresh install (a kernel pair did this before, ~0.8 s
CPU of the first ``mlw fit``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mlw.io._codes import (
    ERR_LABEL_MISSING,
    ERR_LABEL_VALUE,
    ERR_OK,
    ROLE_COPY,
    ROLE_INVERT,
    ROLE_LABEL_NOM,
    ROLE_LABEL_NUM,
    ROLE_ONEHOT,
)


@dataclass
class Expansion:
    """Per-row entry counts of ``X`` and ``Y`` (``x_counts``, ``y_counts``) and the
    first bad label (``err``: code, row, attribute; code ``ERR_OK`` when none). The
    other fields are what :meth:`fill` needs."""

    x_counts: np.ndarray
    y_counts: np.ndarray
    err: np.ndarray
    row: np.ndarray          # the row of each stored entry
    cols: np.ndarray         # the attribute of each stored entry
    vals: np.ndarray
    role: np.ndarray         # per attribute
    outcol: np.ndarray
    width: np.ndarray
    one_code: np.ndarray
    complex_attrs: np.ndarray
    absent: np.ndarray       # (rows, complex attributes): not stored in the row
    ro: np.ndarray           # the role of each stored entry
    _first: dict[bool, np.ndarray] = field(default_factory=dict)

    def _first_items(self, to_x: bool) -> np.ndarray:
        """The stored entries that give at least one item of ``X`` (``to_x``) or
        ``Y``: every copied value, an inverted binary's NaN, every one-hot value; a
        nominal label at its value 1, every (checked) numeric label. Computed once."""
        if to_x in self._first:
            return self._first[to_x]
        ro = self.ro
        if to_x:
            keep = (ro == ROLE_COPY) | (ro == ROLE_ONEHOT)
            if (self.role == ROLE_INVERT).any():
                keep |= (ro == ROLE_INVERT) & np.isnan(self.vals)
            first = np.flatnonzero(keep)
        else:
            first = np.flatnonzero((ro == ROLE_LABEL_NOM) | (ro == ROLE_LABEL_NUM))
            nominal = self.ro[first] == ROLE_LABEL_NOM
            one = self.vals[first] == self.one_code[self.cols[first]]
            first = first[~nominal | one]
        self._first[to_x] = first
        return first

    def _absent_items(self, to_x: bool) -> tuple[np.ndarray, np.ndarray]:
        """``(row, attribute)`` of each absent complex attribute giving an item of
        ``X`` (``to_x``) or ``Y``, rows in order and attributes in order within a row."""
        cx_role = self.role[self.complex_attrs]
        wanted = (((cx_role == ROLE_INVERT) | (cx_role == ROLE_ONEHOT)) if to_x
                  else cx_role == ROLE_LABEL_NOM)
        r, c = np.nonzero(self.absent[:, wanted])
        return r, self.complex_attrs[np.flatnonzero(wanted)[c]]

    def _counts(self, to_x: bool) -> np.ndarray:
        n_rows = self.absent.shape[0]
        first = self._first_items(to_x)
        counts = np.bincount(self.row[first], minlength=n_rows)
        r, _ = self._absent_items(to_x)
        counts += np.bincount(r, minlength=n_rows)
        if to_x:
            wide = self._missing_onehot(first)
            np.add.at(counts, self.row[first[wide]], self.width[self.cols[first[wide]]] - 1)
        return counts.astype(np.int64)

    def _missing_onehot(self, first: np.ndarray) -> np.ndarray:
        """Which of the items ``first`` are a missing one-hot value."""
        if not (self.role == ROLE_ONEHOT).any():
            return np.zeros(0, dtype=np.int64)
        return np.flatnonzero((self.ro[first] == ROLE_ONEHOT) & np.isnan(self.vals[first]))

    def fill(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(x_idx, x_val, y_idx)``: the column and value of every ``X`` entry and the
        column of every ``Y`` entry, row after row (``x_counts`` and ``y_counts`` a
        row)."""
        n_rows = self.absent.shape[0]
        out: list[np.ndarray] = []
        for to_x in (True, False):
            first = self._first_items(to_x)
            a = self.cols[first]
            idx = self.outcol[a]
            val = self.vals[first]
            # where the extra items go: before the first item of the next row (absent
            # attributes), right after their entry (a missing one-hot's other columns)
            per_row = np.bincount(self.row[first], minlength=n_rows)
            ends = np.cumsum(per_row)
            r, c = self._absent_items(to_x)
            at = [ends[r]]
            extra_idx = [self.outcol[c]]
            extra_val = [np.ones(r.shape[0])]
            if to_x:
                onehot = np.flatnonzero(self.ro[first] == ROLE_ONEHOT)
                code = val[onehot]
                present = ~np.isnan(code)
                idx[onehot[present]] += code[present].astype(np.int64)
                val[onehot[present]] = 1.0
                wide = self._missing_onehot(first)
                more = self.width[a[wide]] - 1
                at.insert(0, np.repeat(wide + 1, more))
                starts = np.cumsum(more) - more
                k = np.arange(int(more.sum())) - np.repeat(starts, more) + 1
                extra_idx.insert(0, np.repeat(idx[wide], more) + k)
                extra_val.insert(0, np.full(k.shape[0], np.nan))
            where = np.concatenate(at)
            if where.size:     # np.insert's stable sort keeps equal positions in order
                idx = np.insert(idx, where, np.concatenate(extra_idx))
                if to_x:
                    val = np.insert(val, where, np.concatenate(extra_val))
            out.append(idx.astype(np.int32))
            if to_x:
                out.append(val.astype(np.float64))
        return out[0], out[1], out[2]


def plan_expansion(indptr: np.ndarray, cols: np.ndarray, vals: np.ndarray, n_rows: int,
                   role: np.ndarray, outcol: np.ndarray, width: np.ndarray,
                   one_code: np.ndarray, complex_attrs: np.ndarray) -> Expansion:
    """Count the entries of ``X`` and ``Y`` per row and find the first bad label (in
    row order, then entry order): a missing label value (``ERR_LABEL_MISSING``) or a
    numeric label other than 1 (``ERR_LABEL_VALUE``; 0 is never stored)."""
    nnz = int(indptr[n_rows])
    cols = cols[:nnz].astype(np.int64)
    vals = vals[:nnz]
    row = np.repeat(np.arange(n_rows, dtype=np.int64), np.diff(indptr[:n_rows + 1]))
    ro = role[cols]
    err = np.zeros(3, dtype=np.int64)
    err[0] = ERR_OK
    where = np.full(role.shape[0], -1, dtype=np.int64)
    where[complex_attrs] = np.arange(complex_attrs.shape[0])
    absent = np.ones((n_rows, complex_attrs.shape[0]), dtype=bool)
    if complex_attrs.size:
        stored = np.flatnonzero(where[cols] >= 0)
        absent[row[stored], where[cols[stored]]] = False
    plan = Expansion(np.zeros(n_rows, np.int64), np.zeros(n_rows, np.int64), err, row, cols,
                     vals, role, outcol, width, one_code, complex_attrs, absent, ro)
    labels = np.flatnonzero((ro == ROLE_LABEL_NOM) | (ro == ROLE_LABEL_NUM))
    v = vals[labels]
    missing = np.isnan(v)
    bad = np.flatnonzero(missing | ((ro[labels] == ROLE_LABEL_NUM) & ~missing & (v != 1.0)))
    if bad.size:
        e = int(labels[bad[0]])
        err[:] = (ERR_LABEL_MISSING if missing[bad[0]] else ERR_LABEL_VALUE, row[e], cols[e])
        return plan
    plan.x_counts = plan._counts(True)
    plan.y_counts = plan._counts(False)
    return plan
