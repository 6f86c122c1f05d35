"""TrueSkill's ``env.rate`` as flat float arithmetic, bit for bit the ``trueskill`` package's (issue 18).

The package (0.4.5) builds a factor graph of ``Gaussian``/``Variable``/``Factor`` objects for every
match and passes messages between them (``TrueSkill.run_schedule``): ~250 µs a two-player match,
75% of a 1,000-bot, 1M-record table. :class:`FastRate` performs **the same floating-point
operations in the same order** on plain floats — each variable's ``(pi, tau)`` and each factor's
message to it as list entries, the same schedule (prior, likelihood and team-sum messages down;
up to 10 sweeps of the team-difference and truncation factors until ``delta <= min_delta``; the
messages back up) and the package's own backend ``cdf``/``pdf``/``ppf`` (``env.cdf`` …) in the
v/w functions of the truncated Gaussian — so its ratings equal ``env.rate``'s to the last bit
(``tests/ratings/test_trueskill_fast.py``: thousands of random cases, 2–6 teams of 1–3 players,
ties, extreme upsets, several environments).

Anything unusual is handed to the package itself, so behaviour is the package's by construction:
fewer than two teams, an empty team, ranks of the wrong length, a non-float backend (``mpmath``),
a callable ``draw_probability``, and **any exception** raised on the way (an upset too extreme for
floats: the package then raises the same error, which :class:`arena.ratings.Rater` answers with
its mpmath fallback). Weights (partial play) are not used by the arena (every weight is 1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import trueskill
from trueskill import backends

INF = float("inf")
#: the package's default ``min_delta`` of ``env.rate`` (``trueskill.DELTA``)
MIN_DELTA = trueskill.DELTA
_new = object.__new__
_sqrt = math.sqrt
_exp = math.exp
#: ``trueskill.backends.cdf``'s ``sigma * math.sqrt(2)`` and ``pdf``'s ``1 / math.sqrt(2 * math.pi) * abs(sigma)``
#: at the package's defaults ``mu=0, sigma=1`` (the same floats: ``1 * x`` is ``x``)
_SQRT2 = 1 * math.sqrt(2)
_PDF_C = 1 / math.sqrt(2 * math.pi) * abs(1)


def _sum(vp: Sequence[float], vt: Sequence[float], mp: Sequence[float], mt: Sequence[float],
         coeffs: Sequence[float]) -> tuple[float, float]:
    """``SumFactor.update``'s message ``(pi, tau)``: the weighted sum of ``vals / msgs``."""
    pi_inv: float = 0
    mu: float = 0
    for k in range(len(coeffs)):
        dpi = vp[k] - mp[k]
        dtau = vt[k] - mt[k]
        c = coeffs[k]
        mu += c * (dpi and dtau / dpi)
        if pi_inv == INF:
            continue
        try:
            pi_inv += c ** 2 / dpi
        except ZeroDivisionError:
            pi_inv = INF
    pi = 1. / pi_inv
    return pi, pi * mu


class FastRate:
    """``env.rate(groups, ranks=ranks)`` of one ``trueskill.TrueSkill`` environment, without the graph.

    :param env: the environment (its ``mu``/``sigma`` are not used: ratings come with the groups;
        ``beta``, ``tau``, ``draw_probability`` and the backend's ``cdf``/``pdf``/``ppf`` are).
    """

    def __init__(self, env: trueskill.TrueSkill) -> None:
        self.env = env
        self.usable = env.backend is None and not callable(env.draw_probability)
        self.cdf, self.pdf = env.cdf, env.pdf
        self.beta2 = env.beta ** 2
        self.dyn2 = env.tau ** 2
        self._margins: dict[int, float] = {}
        #: :meth:`pair` applies: the package's float backend (its ``cdf``/``pdf`` inlined there)
        self.scalar = self.usable and env.cdf is backends.cdf and env.pdf is backends.pdf
        self._margin2 = 0.
        if self.scalar:
            try:
                self._margin2 = self.margin(2)
            except Exception:  # the package raises it in env.rate: the general path does
                self.scalar = False

    def margin(self, size: int) -> float:
        """``trueskill.calc_draw_margin`` for ``size`` players in two adjacent teams (cached)."""
        m = self._margins.get(size)
        if m is None:
            m = self._margins[size] = trueskill.calc_draw_margin(self.env.draw_probability, size, self.env)
        return m

    def rate(self, groups: Sequence[Sequence[trueskill.Rating]], ranks: Sequence[Any]) -> list[tuple[Any, ...]]:
        """New ratings, per group as tuples of ``trueskill.Rating`` (in the groups' order).

        :raises: what ``env.rate`` raises (``FloatingPointError``, ``ValueError``, …): on any
            error the package's own ``env.rate`` is called with the same arguments.
        """
        g = len(groups)
        if not self.usable or g < 2 or len(ranks) != g or not all(groups):
            return self.env.rate(groups, ranks=ranks)
        try:
            return self._rate(groups, ranks, g)
        except Exception:  # the package decides (and raises) on the same input
            return self.env.rate(groups, ranks=ranks)

    def _rate(self, groups: Sequence[Sequence[trueskill.Rating]], ranks: Sequence[Any],
              g: int) -> list[tuple[Any, ...]]:
        """``env.rate`` on groups of at least one rating each (``TrueSkill.run_schedule``'s order)."""
        if g == 2:
            if ranks[1] < ranks[0]:
                new_b, new_a = self._two(groups[1], groups[0], ranks[1] == ranks[0])
            else:
                new_a, new_b = self._two(groups[0], groups[1], ranks[0] == ranks[1])
            return [new_a, new_b]
        order = sorted(range(g), key=ranks.__getitem__)
        teams = [self._team_down(groups[i]) for i in order]
        m = g - 1
        tp, tt = [t[1] for t in teams], [t[2] for t in teams]
        # messages of diff factor k to t_k (left) and t_{k+1} (right), to d_k; truncation's to d_k
        ml_p, ml_t, mr_p, mr_t = [0.] * m, [0.] * m, [0.] * m, [0.] * m
        dp, dt, mdd_p, mdd_t, mtd_p, mtd_t = [0.] * m, [0.] * m, [0.] * m, [0.] * m, [0.] * m, [0.] * m
        ties = [ranks[order[k]] == ranks[order[k + 1]] for k in range(m)]
        margins = [self.margin(len(groups[order[k]]) + len(groups[order[k + 1]])) for k in range(m)]
        st = (tp, tt, ml_p, ml_t, mr_p, mr_t, dp, dt, mdd_p, mdd_t, mtd_p, mtd_t)
        for _ in range(10):
            delta = 0.
            for k in range(m - 1):
                self._down(st, k)
                delta = max(delta, self._trunc(st, k, margins[k], ties[k]))
                self._up1(st, k)
            for k in range(m - 1, 0, -1):
                self._down(st, k)
                delta = max(delta, self._trunc(st, k, margins[k], ties[k]))
                self._up0(st, k)
            if delta <= MIN_DELTA:
                break
        self._up0(st, 0)
        self._up1(st, m - 1)
        res: list[tuple[Any, ...]] = [()] * g
        for j in range(g):
            res[order[j]] = self._team_up(teams[j][0], tp[j], tt[j])
        return res

    def _two(self, ga: Sequence[trueskill.Rating], gb: Sequence[trueskill.Rating],
             tie: bool) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        """Two teams, ``ga`` ranked first (or tied): the package's two-team schedule on scalars."""
        sa, ap, at = self._team_down(ga)
        sb, bp, bt = self._team_down(gb)
        margin = self.margin(len(ga) + len(gb))
        vw = self._vw_draw if tie else self._vw_win
        ml_p = ml_t = mr_p = mr_t = 0.
        dp = dt = mdd_p = mdd_t = mtd_p = mtd_t = 0.
        # the difference factor's message down depends on the teams only, which the loop leaves
        # alone (two teams: nothing goes up before it ends): the same floats every sweep
        dnpi, dntau = _sum((ap, bp), (at, bt), (ml_p, mr_p), (ml_t, mr_t), (1., -1.))
        for _ in range(10):
            npi, ntau = dnpi, dntau
            dp, dt = (dp - mdd_p) + npi, (dt - mdd_t) + ntau
            mdd_p, mdd_t = npi, ntau
            # the truncation factor up (TruncateFactor.up + Variable.update_value)
            dpi, dtau = dp - mtd_p, dt - mtd_t
            sqrt_pi = _sqrt(dpi)
            v, w = vw(dtau / sqrt_pi, margin * sqrt_pi)
            denom = (1. - w)
            pi, tau = dpi / denom, (dtau + sqrt_pi * v) / denom
            mtd_p, mtd_t = (pi + mtd_p) - dp, (tau + mtd_t) - dt
            pi_delta = abs(dp - pi)
            delta = 0. if pi_delta == INF else max(abs(dt - tau), _sqrt(pi_delta))
            dp, dt = pi, tau
            if delta <= MIN_DELTA:
                break
        npi, ntau = _sum((dp, bp), (dt, bt), (mdd_p, mr_p), (mdd_t, mr_t), (1., 1.))
        ap, at = (ap - ml_p) + npi, (at - ml_t) + ntau
        ml_p, ml_t = npi, ntau
        npi, ntau = _sum((ap, dp), (at, dt), (ml_p, mdd_p), (ml_t, mdd_t), (1., -1.))
        bp, bt = (bp - mr_p) + npi, (bt - mr_t) + ntau
        return self._team_up(sa, ap, at), self._team_up(sb, bp, bt)

    def pair(self, pa: float, ta: float, pb: float, tb: float, tie: bool) -> tuple[float, float, float, float]:
        """``env.rate([(a,), (b,)], ranks=[0, 0 if tie else 1])`` on the ratings' ``(pi, tau)``: the new
        ``(pi_a, tau_a, pi_b, tau_b)`` — :meth:`_two` for one player a team with every step inlined
        (the same operations in the same order, the package's ``cdf``/``pdf``/``erfc`` written out),
        so the same floats as :meth:`rate`. Only when :attr:`scalar` is true.

        :raises: any error :meth:`rate` would hand to the package (``FloatingPointError`` on an
            extreme upset, ``ValueError``, ``ZeroDivisionError`` …): the caller then takes the
            general path (:meth:`rate`), which decides as the package does.
        """
        dyn2, beta2, INF_ = self.dyn2, self.beta2, INF
        # _team_down of each team: prior (with dynamics), likelihood, the one-player sum
        mu = pa and ta / pa
        sig = _sqrt(1 / pa) if pa else INF_
        s = _sqrt(sig ** 2 + dyn2)
        if s == 0:
            raise ValueError("sigma**2 should be greater than 0")
        a_rpi = s ** -2
        a_rtau = a_rpi * mu
        mpi, mtau = a_rpi - 0, a_rtau - 0
        k = 1. / (1. + beta2 * mpi)
        a_lp, a_lt = k * mpi, k * mtau          # the likelihood's message to the perf var
        a_pp, a_pt = (0 - 0) + a_lp, (0 - 0) + a_lt  # the perf var
        dpi, dtau = a_pp - 0., a_pt - 0.
        mu2 = 0 + 1. * (dpi and dtau / dpi)
        a_sp = 1. / (0 + 1. ** 2 / dpi)         # the sum's message to the team var (a zero dpi raises)
        a_st = a_sp * mu2
        ap, at = (0 - 0) + a_sp, (0 - 0) + a_st
        mu = pb and tb / pb
        sig = _sqrt(1 / pb) if pb else INF_
        s = _sqrt(sig ** 2 + dyn2)
        if s == 0:
            raise ValueError("sigma**2 should be greater than 0")
        b_rpi = s ** -2
        b_rtau = b_rpi * mu
        mpi, mtau = b_rpi - 0, b_rtau - 0
        k = 1. / (1. + beta2 * mpi)
        b_lp, b_lt = k * mpi, k * mtau
        b_pp, b_pt = (0 - 0) + b_lp, (0 - 0) + b_lt
        dpi, dtau = b_pp - 0., b_pt - 0.
        mu2 = 0 + 1. * (dpi and dtau / dpi)
        b_sp = 1. / (0 + 1. ** 2 / dpi)
        b_st = b_sp * mu2
        bp, bt = (0 - 0) + b_sp, (0 - 0) + b_st
        margin = self._margin2
        # the difference factor down (_sum of (a, b) with coefficients (1, -1), zero messages)
        dpi, dtau = ap - 0., at - 0.
        mu = 0 + 1. * (dpi and dtau / dpi)
        pi_inv = 0 + 1. ** 2 / dpi
        dpi, dtau = bp - 0., bt - 0.
        mu += -1. * (dpi and dtau / dpi)
        pi_inv += (-1.) ** 2 / dpi
        npi = 1. / pi_inv
        ntau = npi * mu
        dp = dt = mdd_p = mdd_t = mtd_p = mtd_t = 0.
        for _ in range(10):
            dp, dt = (dp - mdd_p) + npi, (dt - mdd_t) + ntau
            mdd_p, mdd_t = npi, ntau
            dpi, dtau = dp - mtd_p, dt - mtd_t
            sqrt_pi = _sqrt(dpi)
            diff, dm = dtau / sqrt_pi, margin * sqrt_pi
            if tie:
                v, w = self._vw_draw(diff, dm)
            else:  # _vw_win with the package's cdf (erfc) and pdf at mu=0, sigma=1
                x = diff - dm
                y = -(x - 0) / _SQRT2
                z = abs(y)
                t = 1. / (1. + z / 2.)
                r = t * _exp(-z * z - 1.26551223 + t * (1.00002368 + t * (
                    0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (
                        0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (
                            -0.82215223 + t * 0.17087277)))))))))
                denom = 0.5 * (2. - r if y < 0 else r)
                v = (_PDF_C * _exp(-(((x - 0) / abs(1)) ** 2 / 2)) / denom) if denom else -x
                w = v * (v + x)
                if not 0 < w < 1:
                    raise FloatingPointError("Cannot calculate correctly, set backend to \"mpmath\"")
            denom = (1. - w)
            pi, tau = dpi / denom, (dtau + sqrt_pi * v) / denom
            mtd_p, mtd_t = (pi + mtd_p) - dp, (tau + mtd_t) - dt
            pi_delta = abs(dp - pi)
            delta = 0. if pi_delta == INF_ else max(abs(dt - tau), _sqrt(pi_delta))
            dp, dt = pi, tau
            if delta <= MIN_DELTA:
                break
        # the difference factor up to a (_sum of (d, b), coefficients (1, 1), b's message 0)
        pi_inv = 0
        dpi, dtau = dp - mdd_p, dt - mdd_t
        mu = 0 + 1. * (dpi and dtau / dpi)
        try:
            pi_inv += 1. ** 2 / dpi
        except ZeroDivisionError:
            pi_inv = INF_
        dpi, dtau = bp - 0., bt - 0.
        mu += 1. * (dpi and dtau / dpi)
        if pi_inv != INF_:
            try:
                pi_inv += 1. ** 2 / dpi
            except ZeroDivisionError:
                pi_inv = INF_
        ml_p = 1. / pi_inv
        ml_t = ml_p * mu
        ap, at = (ap - 0.) + ml_p, (at - 0.) + ml_t
        # ... and to b (_sum of (a, d), coefficients (1, -1))
        pi_inv = 0
        dpi, dtau = ap - ml_p, at - ml_t
        mu = 0 + 1. * (dpi and dtau / dpi)
        try:
            pi_inv += 1. ** 2 / dpi
        except ZeroDivisionError:
            pi_inv = INF_
        dpi, dtau = dp - mdd_p, dt - mdd_t
        mu += -1. * (dpi and dtau / dpi)
        if pi_inv != INF_:
            try:
                pi_inv += (-1.) ** 2 / dpi
            except ZeroDivisionError:
                pi_inv = INF_
        npi = 1. / pi_inv
        bp, bt = (bp - 0.) + npi, (bt - 0.) + npi * mu
        # _team_up of each: the sum up to the perf var, the likelihood up, the new rating
        return self._up(ap, at, a_sp, a_st, a_pp, a_pt, a_lp, a_lt, a_rpi, a_rtau) + \
            self._up(bp, bt, b_sp, b_st, b_pp, b_pt, b_lp, b_lt, b_rpi, b_rtau)

    def _up(self, tp: float, tt: float, sp: float, st: float, pp: float, pt: float, lp: float, lt: float,
            rpi: float, rtau: float) -> tuple[float, float]:
        """:meth:`_team_up` of a one-player team: the new rating's ``(pi, tau)``."""
        pi_inv: float = 0
        mu: float = 0
        dpi, dtau = tp - sp, tt - st
        mu += 1. * (dpi and dtau / dpi)
        try:
            pi_inv += 1. ** 2 / dpi
        except ZeroDivisionError:
            pi_inv = INF
        npi = 1. / pi_inv
        ntau = npi * mu
        pp, pt = (pp - 0.) + npi, (pt - 0.) + ntau
        mpi, mtau = pp - lp, pt - lt
        k = 1. / (1. + self.beta2 * mpi)
        vpi, vtau = (rpi - 0) + k * mpi, (rtau - 0) + k * mtau
        mu = float(vpi and vtau / vpi)
        sigma = float(_sqrt(1 / vpi) if vpi else INF)
        if sigma == 0:
            raise ValueError("sigma**2 should be greater than 0")
        pi = sigma ** -2
        return pi, pi * mu

    def _team_down(self, group: Sequence[trueskill.Rating]) -> tuple[list[list[float]], float, float]:
        """A team's prior, likelihood and sum factors down: ``(state, team pi, team tau)``.

        ``state``: per player ``[rating pi, rating tau, perf pi, perf tau, likelihood's message to
        perf (pi, tau), team sum's message to perf (pi, tau)]``, then the sum's message to the team
        ``[pi, tau]`` last. (The prior's and the likelihood's messages to the rating var are never
        read again: the rating var is only updated once more, from its zero likelihood message.)
        """
        dyn2, beta2 = self.dyn2, self.beta2
        state = []
        for r in group:
            pi, tau = r.pi, r.tau
            mu = pi and tau / pi
            sig = _sqrt(1 / pi) if pi else INF
            s = _sqrt(sig ** 2 + dyn2)
            if s == 0:
                raise ValueError("sigma**2 should be greater than 0")
            rpi = s ** -2
            rtau = rpi * mu
            mpi, mtau = rpi - 0, rtau - 0
            a = 1. / (1. + beta2 * mpi)
            npi, ntau = a * mpi, a * mtau
            state.append([rpi, rtau, (0 - 0) + npi, (0 - 0) + ntau, npi, ntau, 0., 0.])
        if len(state) == 1:
            ppi, ptau = state[0][2], state[0][3]
            pi_inv: float = 0
            mu2: float = 0
            dpi, dtau = ppi - 0., ptau - 0.
            mu2 += 1. * (dpi and dtau / dpi)
            try:
                pi_inv += 1. ** 2 / dpi
            except ZeroDivisionError:
                pi_inv = INF
            tpi = 1. / pi_inv
            ttau = tpi * mu2
        else:
            tpi, ttau = _sum([p[2] for p in state], [p[3] for p in state], [0.] * len(state), [0.] * len(state),
                             [1.] * len(state))
        state.append([tpi, ttau])
        return state, (0 - 0) + tpi, (0 - 0) + ttau

    def _team_up(self, state: list[list[float]], tp: float, tt: float) -> tuple[Any, ...]:
        """A team's sum factor up to each perf var (in order), the likelihoods up, the new ratings."""
        mst_p, mst_t = state[-1]
        players = state[:-1]
        n = len(players)
        for x in range(n):
            p = players[x]
            if n == 1:
                pi_inv: float = 0
                mu: float = 0
                dpi, dtau = tp - mst_p, tt - mst_t
                mu += 1. * (dpi and dtau / dpi)
                try:
                    pi_inv += 1. ** 2 / dpi
                except ZeroDivisionError:
                    pi_inv = INF
                npi = 1. / pi_inv
                ntau = npi * mu
            else:
                vp, vt = [q[2] for q in players], [q[3] for q in players]
                mp, mt = [q[6] for q in players], [q[7] for q in players]
                vp[x], vt[x], mp[x], mt[x] = tp, tt, mst_p, mst_t
                coeffs = [-1.] * n
                coeffs[x] = 1.
                npi, ntau = _sum(vp, vt, mp, mt, coeffs)
            p[2], p[3] = (p[2] - p[6]) + npi, (p[3] - p[7]) + ntau
            p[6], p[7] = npi, ntau
        out = []
        beta2 = self.beta2
        Rating = trueskill.Rating
        for p in players:
            mpi, mtau = p[2] - p[4], p[3] - p[5]
            a = 1. / (1. + beta2 * mpi)
            vpi, vtau = (p[0] - 0) + a * mpi, (p[1] - 0) + a * mtau
            mu = float(vpi and vtau / vpi)
            sigma = float(_sqrt(1 / vpi) if vpi else INF)
            if sigma == 0:
                raise ValueError("sigma**2 should be greater than 0")
            r = _new(Rating)
            r.pi = pi = sigma ** -2
            r.tau = pi * mu
            out.append(r)
        return tuple(out)

    @staticmethod
    def _down(st: tuple[list[float], ...], k: int) -> None:
        """Team-difference factor ``k`` down to its var ``d_k = t_k − t_{k+1}``."""
        tp, tt, ml_p, ml_t, mr_p, mr_t, dp, dt, mdd_p, mdd_t, _, _ = st
        npi, ntau = _sum((tp[k], tp[k + 1]), (tt[k], tt[k + 1]), (ml_p[k], mr_p[k]), (ml_t[k], mr_t[k]), (1., -1.))
        dp[k], dt[k] = (dp[k] - mdd_p[k]) + npi, (dt[k] - mdd_t[k]) + ntau
        mdd_p[k], mdd_t[k] = npi, ntau

    @staticmethod
    def _up0(st: tuple[list[float], ...], k: int) -> None:
        """Team-difference factor ``k`` up to its left team ``t_k``."""
        tp, tt, ml_p, ml_t, mr_p, mr_t, dp, dt, mdd_p, mdd_t, _, _ = st
        npi, ntau = _sum((dp[k], tp[k + 1]), (dt[k], tt[k + 1]), (mdd_p[k], mr_p[k]), (mdd_t[k], mr_t[k]), (1., 1.))
        tp[k], tt[k] = (tp[k] - ml_p[k]) + npi, (tt[k] - ml_t[k]) + ntau
        ml_p[k], ml_t[k] = npi, ntau

    @staticmethod
    def _up1(st: tuple[list[float], ...], k: int) -> None:
        """Team-difference factor ``k`` up to its right team ``t_{k+1}``."""
        tp, tt, ml_p, ml_t, mr_p, mr_t, dp, dt, mdd_p, mdd_t, _, _ = st
        npi, ntau = _sum((tp[k], dp[k]), (tt[k], dt[k]), (ml_p[k], mdd_p[k]), (ml_t[k], mdd_t[k]), (1., -1.))
        j = k + 1
        tp[j], tt[j] = (tp[j] - mr_p[k]) + npi, (tt[j] - mr_t[k]) + ntau
        mr_p[k], mr_t[k] = npi, ntau

    def _trunc(self, st: tuple[list[float], ...], k: int, margin: float, tie: bool) -> float:
        """``TruncateFactor.up`` of difference ``k`` (win or draw); returns the variable's delta."""
        dp, dt, mtd_p, mtd_t = st[6], st[7], st[10], st[11]
        vp, vt = dp[k], dt[k]
        dpi, dtau = vp - mtd_p[k], vt - mtd_t[k]
        sqrt_pi = _sqrt(dpi)
        diff, dm = dtau / sqrt_pi, margin * sqrt_pi
        v, w = self._vw_draw(diff, dm) if tie else self._vw_win(diff, dm)
        denom = (1. - w)
        pi, tau = dpi / denom, (dtau + sqrt_pi * v) / denom
        mtd_p[k], mtd_t[k] = (pi + mtd_p[k]) - vp, (tau + mtd_t[k]) - vt
        pi_delta = abs(vp - pi)
        delta = 0. if pi_delta == INF else max(abs(vt - tau), _sqrt(pi_delta))
        dp[k], dt[k] = pi, tau
        return delta

    def _vw_win(self, diff: float, draw_margin: float) -> tuple[float, float]:
        """``env.v_win`` and ``env.w_win`` (the package's formulas and backend)."""
        x = diff - draw_margin
        denom = self.cdf(x)
        v = (self.pdf(x) / denom) if denom else -x
        w = v * (v + x)
        if 0 < w < 1:
            return v, w
        raise FloatingPointError("Cannot calculate correctly, set backend to \"mpmath\"")

    def _vw_draw(self, diff: float, draw_margin: float) -> tuple[float, float]:
        """``env.v_draw`` and ``env.w_draw`` (the package's formulas and backend)."""
        cdf, pdf = self.cdf, self.pdf
        abs_diff = abs(diff)
        a, b = draw_margin - abs_diff, -draw_margin - abs_diff
        denom = cdf(a) - cdf(b)
        numer = pdf(b) - pdf(a)
        inner = (numer / denom) if denom else a
        v = inner * (-1 if diff < 0 else +1)
        if not denom:
            raise FloatingPointError("Cannot calculate correctly, set backend to \"mpmath\"")
        w = (inner * +1) ** 2 + (a * pdf(a) - b * pdf(b)) / denom
        return v, w
