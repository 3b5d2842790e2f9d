"""``jax.experimental``'s commonly imported pieces: :mod:`funcgrad.experimental.ode`
(``odeint``) and :mod:`funcgrad.experimental.jet` (``jet``). See docs/experimental.md.
"""

from funcgrad.experimental import jet, ode

__all__ = ["jet", "ode"]
