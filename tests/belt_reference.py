"""The event-driven reference of a damped spring-mass on a moving belt (stick-slip), shared by
the belt tests of the plane and the solid contact engines.

A mass ``m`` (kg) on a spring ``k`` (N/m) and a damper ``c`` (N s/m) to the ground, pressed on
a belt moving at ``vb`` (m/s) by ``N`` (N), with a friction law of static coefficient
``law.mu_static`` and slip coefficient ``law.coefficient(v)``. From rest it slips (the belt ahead
of it), catches the belt, sticks and leaves the stick where the spring and damper force ``k x + c
vb`` reaches ``mu_s N``: a stick-slip limit cycle. Written independently of the engine: slip phases
by SciPy's ``solve_ivp`` (DOP853, rtol 1e-12) with a terminal event where the mass catches the
belt (x' = vb), stick phases in closed form (x' = vb until the exit force is reached).
"""

from __future__ import annotations

from scipy.integrate import solve_ivp


def reference(law, t_end, *, m, k, c, N, vb):
    """Event times from rest: [("stick", t), ("slip", t), ...] (s), those before ``t_end``."""
    x_exit = (law.mu_static * N - c * vb) / k  # stick ends where k x + c vb = mu_s N

    def slip(t, y):  # the belt ahead of the mass (vr >= 0) in every slip phase of this motion
        vr = vb - y[1]
        return [y[1], (float(law.coefficient(abs(vr))) * N - c * y[1] - k * y[0]) / m]

    def catch(t, y):  # the mass catches the belt from below
        return y[1] - vb

    catch.terminal, catch.direction = True, 1
    events, t0, y0 = [], 0.0, [0.0, 0.0]
    tight = dict(rtol=1e-12, atol=1e-14, method="DOP853")
    while t0 < t_end:
        if t0 > 0.0:  # leaving the stick at vr = 0: 1 ms without the event (no catch can be that soon;
            # with Stribeck the relative speed grows from 0 as t^2 and would touch the event)
            sol = solve_ivp(slip, (t0, t0 + 1e-3), y0, **tight)
            t0, y0 = t0 + 1e-3, sol.y[:, -1]
            assert y0[1] < vb
        sol = solve_ivp(slip, (t0, t_end + 2.0), y0, events=catch, **tight)
        t1, x1 = float(sol.t_events[0][0]), float(sol.y_events[0][0][0])
        assert k * x1 + c * vb <= law.mu_static * N  # the stick holds at the catch
        events.append(("stick", t1))
        t2 = t1 + (x_exit - x1) / vb
        events.append(("slip", t2))
        t0, y0 = t2, [x_exit, vb]
    return [e for e in events if e[1] < t_end]


def engine_events(res, node=0):
    """(kind, t) of each change between stick (1) and slip (2, or 3: slip- of the plane engine)
    of one slave node of a run."""
    st = res.nodes["state"][:, node]
    t = res.t
    out = []
    for j in range(1, st.size):
        if st[j] == 1 and st[j - 1] >= 2:
            out.append(("stick", t[j]))
        elif st[j] >= 2 and st[j - 1] == 1:
            out.append(("slip", t[j]))
    return out
