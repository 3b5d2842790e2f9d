"""Regenerate ``jax_programs.json`` from JAX 0.10 (needs JAX; CI does not):

    python tests/funcgrad/programs/make_jax_programs_fixtures.py [p_name ...]

(with names, only those programs are run again; the others keep their recorded values, and
programs no longer in ``jax_programs.py`` are dropped).

Runs every ``p_*`` program of ``jax_programs.py`` with JAX (x64 on: funcgrad's dtypes are
NumPy's, float64 by default) and stores its results, flattened by :func:`flatten`: for each
leaf its dtype, shape and values, or a plain Python value (strings, ints, bools, None).
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import sys
from typing import Any

import numpy as np

HERE = pathlib.Path(__file__).parent


def flatten(x: Any) -> list[Any]:
    """The leaves of a result, in a fixed order (dicts by sorted key)."""
    if isinstance(x, dict):
        return [v for key in sorted(x, key=str) for v in flatten(x[key])]
    if isinstance(x, (list, tuple)):
        return [v for e in x for v in flatten(e)]
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return [v for f in dataclasses.fields(x) for v in flatten(getattr(x, f.name))]
    return [x]


def encode(leaf: Any) -> dict[str, Any]:
    if leaf is None or isinstance(leaf, (str, bool, int, float)):
        return {"py": leaf}
    a = np.asarray(leaf)
    values = a.ravel()
    if a.dtype.kind == "c":
        values = np.stack([values.real, values.imag], -1)
    return {"dtype": str(a.dtype), "shape": list(a.shape),
            "value": [None if isinstance(v, float) and np.isnan(v) else v
                      for v in values.ravel().tolist()]}


def main() -> None:
    # 4 host devices, as JAX's sharding tests run: the mesh programs list 4 devices (funcgrad
    # lists its one device 4 times); must be set before JAX starts
    os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
    import jax
    import jax.ad_checkpoint  # noqa: F401
    import jax.experimental.checkify  # noqa: F401
    import jax.experimental.jet  # noqa: F401
    import jax.experimental.ode  # noqa: F401
    import jax.experimental.sparse  # noqa: F401
    import jax.flatten_util  # noqa: F401
    import jax.image  # noqa: F401
    import jax.numpy as jnp
    import jax.random as random
    import jax.scipy as jsp
    import jax.scipy.cluster.vq  # noqa: F401
    import jax.scipy.fft  # noqa: F401
    import jax.scipy.integrate  # noqa: F401
    import jax.scipy.interpolate  # noqa: F401
    import jax.scipy.linalg  # noqa: F401
    import jax.scipy.ndimage  # noqa: F401
    import jax.scipy.optimize  # noqa: F401
    import jax.scipy.signal  # noqa: F401
    import jax.scipy.sparse.linalg  # noqa: F401
    import jax.scipy.spatial.transform  # noqa: F401
    import jax.scipy.special  # noqa: F401
    import jax.tree_util as tu
    from jax import lax

    jax.config.update("jax_enable_x64", True)
    sys.path.insert(0, str(HERE))
    import jax_programs

    ns = {"jax": jax, "jnp": jnp, "lax": lax, "random": random, "tu": tu, "jsp": jsp}
    path = HERE / "jax_programs.json"
    only = set(sys.argv[1:])
    old = json.loads(path.read_text()) if only else {}
    out = {}
    for name in sorted(vars(jax_programs)):
        if name.startswith("p_"):
            if only and name not in only and name in old:
                out[name] = old[name]
                continue
            result = getattr(jax_programs, name)(**ns)
            out[name] = [encode(leaf) for leaf in flatten(result)]
    path.write_text(json.dumps(out, separators=(",", ":")) + "\n")
    print(f"wrote {len(out)} programs")


if __name__ == "__main__":
    main()
